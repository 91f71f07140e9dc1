"""The gateway side of session binding (seed 002 §8, §13): the heartbeat before every frame and
releasing the bind when a connection leaves. The frames that bind or watch a session are in
gateway/session_frames.py.

A connection is bound (holds the session's bind, or joined a multi-client session) or a
monitor (sees events and may steer, pause, resume and stop, but never binds and never
heartbeats, so it cannot keep a session alive or steal it).
"""

from __future__ import annotations

import logging
import time

import grpc

from gateway.connection import Connection
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

# WebSocket close code when the bind is lost for good (taken over, session closed/archived).
CLOSE_BIND_LOST = 4409


def caller(conn: Connection) -> spb.Caller:
    return spb.Caller(user_id=conn.principal.username, roles=list(conn.principal.roles))


async def heartbeat(conn: Connection) -> str:
    """Before every frame of a bound connection: "" to go on, else the reason to close.
    A session_service outage does not drop clients: the frame goes on unchecked.

    A heartbeat asks for a lease (session_service/bind_leases.py): for that long, counted from
    when the request was sent, frames go on without asking. Whatever takes the bind away
    answers only after the lease has run out, so the first frame after a takeover still
    asks and is refused."""
    if not conn.session_id or conn.monitor:
        return ""
    sent = time.monotonic()
    if sent < conn.bind_trusted_until:
        return ""
    try:
        beat = await conn.clients.sessions.Heartbeat(
            spb.HeartbeatRequest(
                session_id=conn.session_id,
                connection_id=conn.connection_id,
                reclaim=True,
                lease_ms=conn.bind_lease_ms,
            )
        )
    except grpc.aio.AioRpcError as exc:
        logger.warning("heartbeat of %s failed: %s", conn.session_id, exc.code().name)
        return ""
    if not beat.ok:
        return beat.reason or "session_bound_elsewhere"
    conn.bind_trusted_until = sent + min(beat.lease_ms, conn.bind_lease_ms) / 1000
    return ""


def lost_code(reason: str) -> int:
    """As in the resume table: a closed (or deleted) session is gone, the rest a conflict."""
    return 404 if reason == "session_closed" else 409


async def release(conn: Connection, *, disconnect: bool) -> None:
    """Gives the bind back (escalating to a survivor of a multi-client session); with
    `disconnect`, session_service applies the session's onDisconnect."""
    if not conn.session_id or conn.monitor:
        return
    try:
        await conn.clients.sessions.ReleaseBind(
            spb.ReleaseBindRequest(
                session_id=conn.session_id,
                connection_id=conn.connection_id,
                disconnect=disconnect,
            )
        )
    except grpc.aio.AioRpcError as exc:
        # The stale-bind sweep frees it later; onDisconnect is lost for this once.
        logger.warning("releasing the bind of %s failed: %s", conn.session_id, exc.code().name)
