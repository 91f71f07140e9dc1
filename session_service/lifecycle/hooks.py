"""Lifecycle hooks: what is attached to a session elsewhere follows it through
archive, reactivate and delete.

The lifecycle calls every hook at the three transitions: `on_session_archived` after the session
is ARCHIVED, `on_session_unarchived` before the fresh chat process is spawned (so a hook can
prepare what the bootstrap picks up), `on_session_deleted` before the rows are removed (the link
to an attachment usually lives in process data that is about to go). A hook that raises is
logged and skipped: the transition the user asked for happens anyway. Hooks must be idempotent,
because "archive, then delete" and a retried request can call them twice.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from session_service.domain.models import Session

logger = logging.getLogger(__name__)


class SessionLifecycleHook(Protocol):
    async def on_session_archived(self, session: Session) -> None: ...

    async def on_session_unarchived(self, session: Session) -> None: ...

    async def on_session_deleted(self, session: Session) -> None: ...


class Hooks:
    """Calls the registered hooks in registration order."""

    def __init__(self, hooks: Sequence[SessionLifecycleHook] = ()) -> None:
        self._hooks = list(hooks)

    def register(self, hook: SessionLifecycleHook) -> None:
        self._hooks.append(hook)

    async def archived(self, session: Session) -> None:
        await self._call("on_session_archived", session)

    async def unarchived(self, session: Session) -> None:
        await self._call("on_session_unarchived", session)

    async def deleted(self, session: Session) -> None:
        await self._call("on_session_deleted", session)

    async def _call(self, method: str, session: Session) -> None:
        for hook in self._hooks:
            try:
                await getattr(hook, method)(session)
            except Exception:
                logger.exception(
                    "lifecycle hook %s.%s failed for session %s; skipped",
                    type(hook).__name__,
                    method,
                    session.session_id,
                )
