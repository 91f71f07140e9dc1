"""Handlers of the frames about the socket itself: `ping` and `logout`."""

from __future__ import annotations

import time
from typing import Any

from gateway.binding import release
from gateway.connection import Connection
from gateway.inputs import NoData, PingData


async def ping(conn: Connection, data: PingData) -> dict[str, Any]:
    return {"clientTimestamp": data.client_timestamp, "serverTimestamp": int(time.time() * 1000)}


async def logout(conn: Connection, data: NoData) -> dict[str, Any]:
    """Revokes the socket's token, then the same path as a disconnect (onDisconnect applies),
    then the socket closes."""
    await conn.revoke_token(conn.principal)
    await release(conn, disconnect=True)
    await conn.unbind()
    conn.close_after_reply = (1000, "logout")
    return {}
