"""The gateway side of session binding (seed 002 §8, §13): the heartbeat before every frame and
releasing the bind when a connection leaves. The frames that bind or watch a session are in
gateway/session_frames.py.

A connection is bound (holds the session's bind, or joined a multi-client session) or a
monitor (sees events and may steer, pause, resume and stop, but never binds and never
heartbeats, so it cannot keep a session alive or steal it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable

import grpc

from gateway.clients import Clients
from gateway.connection import Connection
from gateway.connection_profile import reset_profile
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

# How far ahead of a lease's end a renewal round must come: its call and the store write.
_RENEW_SLACK_S = 0.05
# WebSocket close code when the bind is lost for good (taken over, session closed/archived).
CLOSE_BIND_LOST = 4409


def caller(conn: Connection) -> spb.Caller:
    return spb.Caller(user_id=conn.principal.username, roles=list(conn.principal.roles))


async def heartbeat(conn: Connection) -> str:
    """Before every frame of a bound connection: "" to go on, else the reason to close.
    A session_service outage does not drop clients: the frame goes on unchecked.

    A heartbeat asks for a lease (session_service/lifecycle/bind_leases.py): for that long,
    counted from when the request was sent, frames go on without asking. Whatever takes the
    bind away answers only once this replica's bind round has dropped the trust or the lease
    has run out, so the first frame after a takeover still asks and is refused. The lease is
    trusted only while the replica's bind rounds hold theirs (gateway/bind_rounds.py): they are
    how a takeover reaches this connection. While they do not (a round late under load, session_service out of reach), a leased connection
    asks without a lease: a check that writes at most once a second per connection, so a
    late round does not turn every frame into a session write."""
    if not conn.session_id or conn.monitor:
        return ""
    sent = time.monotonic()
    leased = sent < conn.bind_trusted_until
    if leased and _rounds_trust(conn, sent):
        conn.bind_used = True  # renew_leases keeps a busy socket's lease ahead of its frames
        return ""
    try:
        beat = await conn.clients.sessions.Heartbeat(
            spb.HeartbeatRequest(
                session_id=conn.session_id,
                connection_id=conn.connection_id,
                reclaim=True,
                lease_ms=0 if leased else conn.bind_lease_ms,
            )
        )
    except grpc.aio.AioRpcError as exc:
        logger.warning("heartbeat of %s failed: %s", conn.session_id, exc.code().name)
        return ""
    if not beat.ok:
        return beat.reason or "session_bound_elsewhere"
    if leased:
        return ""  # the lease stands; its renewal is renew_leases' (bind_used is kept)
    if conn.bind_dropped_at < sent:  # else a bind round dropped it while this was on its way
        conn.bind_trusted_until = sent + min(beat.lease_ms, conn.bind_lease_ms) / 1000
    conn.bind_used = False
    return ""


def _rounds_trust(conn: Connection, now: float) -> bool:
    return conn.bind_rounds is not None and conn.bind_rounds.trusts(now)


async def renew_leases_forever(
    connections: Callable[[], Iterable[Connection]], clients: Clients, lease_ms: int
) -> None:
    """Every tenth of a lease, renews in one call the leases of the sockets that sent frames
    under them and whose lease ends before the next round, so a busy socket's frames never
    wait for a heartbeat and the replica's renewals cost one call and one bulk write per
    round, not one each. A lease is renewed shortly before its end, so each busy session's
    document is still rewritten about once per lease (the store's cost is per document). A
    socket that went quiet is left to lapse; its next frame asks with Heartbeat, as before."""
    if lease_ms <= 0:
        return
    period_s = lease_ms / 10_000
    while True:
        await asyncio.sleep(period_s)
        try:
            await renew_leases(list(connections()), clients, horizon_s=period_s + _RENEW_SLACK_S)
        except grpc.aio.AioRpcError as exc:
            # The leases lapse and each socket's next frame asks on its own.
            logger.warning("renewing bind leases failed: %s", exc.code().name)
        except Exception:
            # A bug here must not end the rounds for the replica's life; frames still ask.
            logger.exception("a bind lease renewal round failed")


async def renew_leases(connections: list[Connection], clients: Clients, *, horizon_s: float) -> int:
    """Renews the leases that end within `horizon_s` of sockets that used theirs; how many
    were granted. A socket whose bind changed meanwhile keeps what its own frames decided."""
    sent = time.monotonic()
    due = [
        c
        for c in connections
        if c.bind_used
        and c.session_id
        and not c.monitor
        and c.bind_trusted_until < sent + horizon_s
    ]
    if not due:
        return 0
    asked = [(c, c.session_id, c.bind_lease_ms) for c in due]
    reply = await clients.sessions_internal.RenewBindLeases(
        sipb.RenewBindLeasesRequest(
            beats=[
                spb.HeartbeatRequest(
                    session_id=session_id, connection_id=c.connection_id, lease_ms=lease_ms
                )
                for c, session_id, lease_ms in asked
            ]
        )
    )
    granted = 0
    for (c, session_id, lease_ms), beat in zip(asked, reply.beats, strict=True):
        if c.session_id != session_id:
            continue
        if beat.ok and c.bind_dropped_at < sent:
            c.bind_trusted_until = max(
                c.bind_trusted_until, sent + min(beat.lease_ms, lease_ms) / 1000
            )
            c.bind_used = False
            granted += 1
        elif not beat.ok:
            c.bind_trusted_until = 0.0  # its next frame asks (and learns why)
    return granted


def lost_code(reason: str) -> int:
    """As in the resume table: a closed (or deleted) session is gone, the rest a conflict."""
    return 404 if reason == "session_closed" else 409


async def release(conn: Connection, *, disconnect: bool) -> None:
    """Gives the bind back (escalating to a survivor of a multi-client session); with
    `disconnect`, session_service applies the session's onDisconnect."""
    if not conn.session_id or conn.monitor:
        return
    await reset_profile(conn)
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
