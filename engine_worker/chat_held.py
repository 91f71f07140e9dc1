"""The chat this worker holds of the processes it ran: the last committed messages of each, so
the next turn of a process on this worker needs neither the recent chat in its assignment nor
a ListChatMessages call. process_service tracks the same per worker stream
(`WorkerConn.chat_held`): it sends `recent_chat_held` instead of the messages when this worker
holds the chat through the turn's chat count, and a commit ack carries the turn's stored
messages to append. Anything missing here only costs the read it saved: the engine's history
read falls back to ListChatMessages, and what that read returns is held from then on."""

from __future__ import annotations

import time
from collections import OrderedDict

from vance.domain import ChatMessage

MAX_PROCESSES = 512  # as many as process_service assumes (process_service/dispatcher.py)
# The recent window an assignment carries (process_service/store.py): held from the start.
RECENT = 100
# A long chat's history read brings more; kept up to this many per process and in all, so a
# worker's memory stays bounded whatever its processes' chats grow to.
MAX_MESSAGES = 1_000
MAX_TOTAL = 20_000
# A process not run here for this long is let go: an idle session is suspended much later
# (lifecycle idle timeouts are minutes to hours), so a suspended one holds nothing here.
IDLE_S = 600.0


class ChatHeld:
    def __init__(self) -> None:
        self._held: OrderedDict[str, tuple[int, list[ChatMessage]]] = OrderedDict()
        self._used: dict[str, float] = {}
        self._total = 0

    def get(self, process_id: str, through: int) -> list[ChatMessage] | None:
        """The last messages through `through`, or None when not held that far exactly."""
        found = self._held.get(process_id)
        if found is None or found[0] != through:
            return None
        self._held.move_to_end(process_id)
        self._used[process_id] = time.monotonic()
        return found[1]

    def put(self, process_id: str, through: int, messages: list[ChatMessage]) -> None:
        self.drop(process_id)
        kept = messages[-MAX_MESSAGES:]
        now = time.monotonic()
        self._held[process_id] = (through, kept)
        self._used[process_id] = now
        self._total += len(kept)
        # Least recently used first: evicted past the bounds, or once idle too long.
        while self._held:
            oldest = next(iter(self._held))
            over = len(self._held) > MAX_PROCESSES or self._total > MAX_TOTAL
            if not over and now - self._used[oldest] < IDLE_S:
                break
            self.drop(oldest)

    def extend(self, process_id: str, base: int, messages: list[ChatMessage]) -> None:
        """A committed turn's messages, numbered base+1 on; dropped unless held through base."""
        found = self.get(process_id, base)
        if found is None:
            self.drop(process_id)
            return
        self.put(process_id, base + len(messages), found + messages)

    def drop(self, process_id: str) -> None:
        found = self._held.pop(process_id, None)
        self._used.pop(process_id, None)
        if found is not None:
            self._total -= len(found[1])
