"""The chat this worker holds of the processes it ran: the last committed messages of each, so
the next turn of a process on this worker needs neither the recent chat in its assignment nor
a ListChatMessages call. The worker's half of the chat-held bookkeeping; process_service's
half (process_service/runtime/chat_held.py) tracks the same per worker stream: an assignment carries
no recent chat (`Assignment.recent_chat` None) when this worker holds the chat through the
turn's chat count, and a commit ack carries the turn's stored messages to append. Anything
missing here only costs the read it saved: the engine's history read falls back to
ListChatMessages, and what that read returns is held from then on (`read`)."""

from __future__ import annotations

import time
from collections import OrderedDict

from engine_worker.protocol import Ack, Assignment
from vance.domain import ChatMessage, share_fields_set

MAX_PROCESSES = 512  # as many as process_service assumes (process_service/runtime/chat_held.py)
# The recent window an assignment carries (process_service/store/process_store.py): held from the start.
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

    def for_turn(self, a: Assignment) -> list[ChatMessage]:
        """The last committed messages for the turn: held here, or brought by the assignment
        (then held from now on)."""
        pid = a.process.id
        if a.recent_chat is None:
            return self.get(pid, a.chat_count) or []
        if a.recent_chat and len(a.recent_chat) == min(a.chat_count, RECENT):
            self.put(pid, a.chat_count, a.recent_chat)
        else:
            self.drop(pid)
        return a.recent_chat

    def read(self, a: Assignment, messages: list[ChatMessage]) -> None:
        """What the turn's ListChatMessages read brought: the last committed messages, through
        the turn's chat count."""
        self.put(a.process.id, a.chat_count, messages)

    def committed(self, a: Assignment, ack: Ack | None) -> None:
        """The turn's commit was answered (None: the stream went first): with all of the turn's
        stored chat the process's chat is held through its end, else it is let go (the next
        assignment brings it)."""
        if ack is not None and ack.chat is not None:
            self.extend(a.process.id, a.chat_count, ack.chat)
        else:
            self.drop(a.process.id)

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
        for m in kept:
            _compact(m)
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


# Every field of a held message was given when it was read (vance/convert.py's chat_from_proto
# names them all), so one set of all the names serves as each one's `model_fields_set`
# (`share_fields_set`: 728 bytes a message, half of what a short message costs). The ids a
# process's messages repeat share one string each.
_SHARED: dict[str, str] = {}


def _compact(m: ChatMessage) -> None:
    """What a held message takes, about 1.5 KB before its content, to about 0.6 KB (a worker
    holds up to MAX_TOTAL of them; issue 28)."""
    share_fields_set(m)
    fields = m.__dict__
    for name in ("session_id", "think_process_id", "process_name"):
        value = fields[name]
        shared = _SHARED.setdefault(value, value)
        if shared is not value:
            fields[name] = shared
    if len(_SHARED) > 4 * MAX_PROCESSES:
        _SHARED.clear()  # ids of processes long gone; the held messages keep their strings
