"""How process_service takes the user's own work on (process_service/server.py)."""

from __future__ import annotations

from pathlib import Path

import grpc
from pymongo.asynchronous.database import AsyncDatabase

from process_service.user_work.host import UserWork
from process_service.user_work.service import UserWorkServicer
from vance.clock import Clock
from vance.config import Config
from vance.store import Document
from vance.v1 import session_pb2_grpc, work_pb2, work_pb2_grpc

WORK_SERVICE_NAME = work_pb2.DESCRIPTOR.services_by_name["UserWorkService"].full_name


def user_work(
    db: AsyncDatabase[Document],
    sessions: session_pb2_grpc.SessionServiceAsyncStub,
    clock: Clock,
    config: Config,
) -> UserWork:
    """Workspaces live under the data directory, beside the embedded store's files."""
    return UserWork(db, sessions, clock, Path(config.data_dir).resolve() / "workspaces")


def serve_user_work(work: UserWork, server: grpc.aio.Server) -> None:
    work_pb2_grpc.add_UserWorkServiceServicer_to_server(UserWorkServicer(work.documents), server)
