"""The gRPC stubs the gateway calls."""

from __future__ import annotations

from dataclasses import dataclass

from vance.channels import Channels
from vance.internal.v1 import session_internal_pb2_grpc
from vance.v1 import process_pb2_grpc, recipe_pb2_grpc, session_pb2_grpc, work_pb2_grpc


@dataclass(frozen=True)
class Clients:
    sessions: session_pb2_grpc.SessionServiceAsyncStub
    # Password checks, bind lease renewal and replica leases: service-only (vance.internal.v1).
    sessions_internal: session_internal_pb2_grpc.SessionInternalServiceAsyncStub
    processes: process_pb2_grpc.ProcessServiceAsyncStub
    recipes: recipe_pb2_grpc.RecipeServiceAsyncStub
    work: work_pb2_grpc.UserWorkServiceAsyncStub  # hosted by process_service

    @classmethod
    def from_channels(cls, channels: Channels) -> Clients:
        return cls(
            sessions=session_pb2_grpc.SessionServiceStub(channels.get("session_service")),
            sessions_internal=session_internal_pb2_grpc.SessionInternalServiceStub(
                channels.get("session_service")
            ),
            processes=process_pb2_grpc.ProcessServiceStub(channels.get("process_service")),
            recipes=recipe_pb2_grpc.RecipeServiceStub(channels.get("recipe_service")),
            work=work_pb2_grpc.UserWorkServiceStub(channels.get("process_service")),
        )
