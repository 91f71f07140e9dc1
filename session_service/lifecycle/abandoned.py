"""Abandoned detection: the one predicate every close path asks.

A session is abandoned when all three hold: fewer than `min-qa-pairs` completed user/assistant
pairs; no side effects; no user investment. Abandoned sessions go straight to CLOSED with
closeReason=ABANDONED instead of filling the archive with typos and test runs.

What counts here, given what the system records today:
- Q&A pairs: over the chat of the session's chat processes, a USER message followed later by an
  ASSISTANT message is one pair (the welcome message before any question is not).
- Side effects: any process other than a chat process (a spawned worker, a process created by
  a trigger), and any successful call of a tool labelled `@persistent` (its effect outlives the
  chat, e.g. a stored recipe or a created project; process_service counts them on the calling
  process, `persistent_tool_calls`). Documents and insights do not exist yet; when they do,
  they add a fact here.
- User investment: `metadata.user_touched_at_ms` (set by
session_service/search/session_metadata.py on the
  first manual change; an auto-suggested title does not set it).
"""

from __future__ import annotations

import re

from session_service.domain.models import Session
from session_service.settings.session_settings import (
    SETTING_ABANDONED_ENABLED,
    SETTING_ABANDONED_MIN_QA,
    Settings,
)
from vance.clients.process import Processes
from vance.config import LifecycleConfig
from vance.domain import ChatRole, ThinkProcess

# The chat process of each generation: `chat`, then `chat-2`, `chat-3` after reactivations.
CHAT_NAME = re.compile(r"^chat(-\d+)?$")


def count_qa_pairs(roles: list[ChatRole]) -> int:
    pairs, asked = 0, False
    for role in roles:
        if role is ChatRole.USER:
            asked = True
        elif role is ChatRole.ASSISTANT and asked:
            pairs, asked = pairs + 1, False
    return pairs


class AbandonedEvaluator:
    def __init__(
        self,
        processes: Processes,
        settings: Settings,
        config: LifecycleConfig,
    ) -> None:
        self._processes = processes
        self._settings = settings
        self._config = config

    async def is_abandoned(self, session: Session) -> bool:
        return session.session_id in await self.abandoned_among([session])

    async def abandoned_among(self, sessions: list[Session]) -> set[str]:
        """The abandoned ones of many sessions: their engines in one process_service call,
        then the chats of those that are still candidates."""
        candidates: list[tuple[Session, int]] = []
        # One settings read per project of the batch: project values over tenant values
        # (docs/operations.md, "Session lifecycle settings").
        by_project: dict[tuple[str, str], dict[str, str]] = {}
        for session in sessions:
            where = (session.tenant_id, session.project_id)
            if where not in by_project:
                by_project[where] = await self._settings.effective(*where)
            values = by_project[where]
            enabled = values.get(SETTING_ABANDONED_ENABLED, "").strip().lower()
            if (enabled or str(self._config.abandoned_detection).lower()) != "true":
                continue
            if session.metadata.user_touched_at_ms is not None:
                continue  # user investment
            min_pairs = _int(
                values.get(SETTING_ABANDONED_MIN_QA), self._config.abandoned_min_qa_pairs
            )
            candidates.append((session, min_pairs))
        if not candidates:
            return set()
        engines = await self._processes.engines_of(
            [s.session_id for s, _ in candidates], include_terminated=True
        )
        out: set[str] = set()
        for session, min_pairs in candidates:
            if await self._few_pairs(session, engines.get(session.session_id, []), min_pairs):
                out.add(session.session_id)
        return out

    async def _few_pairs(
        self, session: Session, processes: list[ThinkProcess], min_pairs: int
    ) -> bool:
        """No side effects and fewer than min_pairs question-and-answer pairs."""
        chats = []
        for p in processes:
            if p.parent_process_id or not CHAT_NAME.match(p.name):
                return False  # a spawned process is a side effect
            if p.persistent_tool_calls:
                return False  # so is a tool call whose effect outlives the chat
            chats.append(p.id)
        pairs = 0
        for pid in chats:
            messages = await self._processes.chat(session.session_id, pid)
            pairs += count_qa_pairs([m.role for m in messages])
            if pairs >= min_pairs:
                return False
        return pairs < min_pairs


def _int(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw else default
    except ValueError:
        return default
