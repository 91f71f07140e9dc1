"""Tells session_service that a user acted on a session, so it indexes the session's new chat
messages for search and sees its first question-and-answer pair (session_service/search_feed.py)."""

from __future__ import annotations

import asyncio
import logging

import grpc

from gateway.clients import Clients
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

_TIMEOUT_S = 2.0


async def note_activity(clients: Clients, tenant: str, session_id: str) -> None:
    """Never fails the user's action: a lost note delays indexing until the next one."""
    try:
        await clients.sessions.NoteSessionActivity(
            spb.NoteSessionActivityRequest(tenant_id=tenant, session_id=session_id),
            timeout=_TIMEOUT_S,
        )
    except grpc.aio.AioRpcError as exc:
        logger.warning("activity of session %s not noted: %s", session_id, exc.code().name)


_pending: set[asyncio.Task[None]] = set()  # strong references until each note is sent


def note_activity_soon(clients: Clients, tenant: str, session_id: str) -> None:
    """Sends the note without holding up the steer's reply or the connection's next frame
    (frames of one socket are handled in order): the note is only a hint for indexing."""
    task = asyncio.ensure_future(note_activity(clients, tenant, session_id))
    _pending.add(task)
    task.add_done_callback(_pending.discard)
