"""Tells session_service that a user acted on a session, so it indexes the session's new chat
messages for search and sees its first question-and-answer pair (session_service/search_feed.py)."""

from __future__ import annotations

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
