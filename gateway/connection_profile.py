"""Profiles apply per connection (seed 001 §8.4-8.5): a socket bound to a session made with
another profile (a project Eddie created has profile `eddie`) has that session's processes
pruned by the socket's own profile while it holds the bind, so a user mediated into the project
gets their client's tools there; releasing the bind gives the session its own profile back."""

from __future__ import annotations

import logging

import grpc

from gateway.connection import Connection
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)


async def apply_profile(conn: Connection, session: spb.Session) -> None:
    """After a bind: only when the profiles differ, so the common case costs no call."""
    if not session.profile or session.profile == conn.profile:
        return
    await conn.clients.processes.SetConnectionProfile(
        ppb.SetConnectionProfileRequest(session_id=session.session_id, profile=conn.profile)
    )
    conn.profile_override = session.session_id


async def reset_profile(conn: Connection) -> None:
    session_id, conn.profile_override = conn.profile_override, ""
    if not session_id:
        return
    try:
        await conn.clients.processes.SetConnectionProfile(
            ppb.SetConnectionProfileRequest(session_id=session_id, profile="")
        )
    except grpc.aio.AioRpcError as exc:
        # The next bind of the session sets it again; until then the socket's profile stays.
        logger.warning("resetting the profile of %s failed: %s", session_id, exc.code().name)
