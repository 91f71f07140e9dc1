"""Abandoned detection: the one predicate every close path asks.

A session is abandoned when all three hold: fewer than `min-qa-pairs` completed user/assistant
pairs; no side effects; no user investment. Abandoned sessions go straight to CLOSED with
closeReason=ABANDONED instead of filling the archive with typos and test runs.

What counts here, given what the system records today:
- Q&A pairs: over the chat of the session's chat processes, a USER message followed later by an
  ASSISTANT message is one pair (the welcome message before any question is not).
- Side effects: any process other than a chat process (a spawned worker, a process created by
  a trigger). Documents, insights and memory do not exist yet; when they do, they add a fact here.
- User investment: `metadata.user_touched_at_ms` (set by session_service/metadata.py on the
  first manual change; an auto-suggested title does not set it).
"""

from __future__ import annotations

import re

from session_service.models import Session
from session_service.settings import SETTING_ABANDONED_ENABLED, SETTING_ABANDONED_MIN_QA, Settings
from vance.clients.process import Processes
from vance.config import LifecycleConfig
from vance.domain import ChatRole

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
        values = await self._settings.effective(session.tenant_id)
        enabled = values.get(SETTING_ABANDONED_ENABLED, "").strip().lower()
        if (enabled or str(self._config.abandoned_detection).lower()) != "true":
            return False
        min_pairs = _int(values.get(SETTING_ABANDONED_MIN_QA), self._config.abandoned_min_qa_pairs)
        if session.metadata.user_touched_at_ms is not None:
            return False
        chats = []
        for p in await self._processes.engines(session.session_id, include_terminated=True):
            if p.parent_process_id or not CHAT_NAME.match(p.name):
                return False  # a spawned process is a side effect
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
