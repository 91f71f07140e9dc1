"""Which worker holds which process's chat: process_service's half of the chat-held
bookkeeping (the worker's half is engine_worker/chat_held.py).

A worker keeps the last committed chat messages of the processes it ran. process_service
tracks, per worker stream, through which chat count each process is held there, so that
- a turn goes to the worker that holds its process's chat when that one has a free slot
  (`holder`, Dispatcher._pick), and its assignment then carries no chat (`TurnChat.held`);
- a commit ack carries the turn's stored messages when they are all of them
  (`TurnChat.for_ack`), and the worker holds the chat through the commit from then on (`acked`).
Only one worker holds a process's chat at a time: a newer copy on one makes every other stale.
A wrong guess costs only a read: the worker's engine falls back to ListChatMessages.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from process_service.process_model import ChatRecord
from process_service.store.process_store import RECENT_CHAT

# Per worker, as many as the worker keeps (engine_worker/chat_held.py MAX_PROCESSES).
HELD_MAX = 512


@dataclass(slots=True)
class TurnChat:
    """The chat side of one turn: what its assignment carries, what it stored."""

    # The last committed messages the assignment carries (ProcessStore.recent_chat); empty
    # when `held`, or when memory did not hold them all (the engine reads them then).
    recent: list[ChatRecord] = field(default_factory=list)
    held: bool = False  # the worker holds the chat through the turn's chat base
    # The messages this turn stored, in order; `fresh` False once a redo met one stored
    # already (then the worker is not told the turn's chat).
    stored: list[ChatRecord] = field(default_factory=list)
    fresh: bool = True

    def stored_one(self, doc: ChatRecord | None) -> None:
        """One append's outcome (Turns.store_chat): the stored message, or None when a redo
        of the turn found it stored already."""
        if doc is None:
            self.fresh = False
        else:
            self.stored.append(doc)

    def for_ack(self, chat_base: int, through: int) -> list[ChatRecord] | None:
        """The turn's stored chat for its commit ack when it is all the process's chat from
        `chat_base` to `through` (the count the commit left); else None."""
        whole = self.fresh and through == chat_base + len(self.stored)
        return self.stored if whole else None


W = TypeVar("W", bound=Hashable)  # a worker's stream (dispatcher.WorkerConn)


class ChatHolders(Generic[W]):
    """Per worker stream: process -> the chat count through which it holds the process's
    chat, most recently used last, bounded; and per process its one holder."""

    def __init__(self) -> None:
        self._held: dict[W, OrderedDict[str, int]] = {}
        self._holder: dict[str, W] = {}

    def holder(self, process_id: str) -> W | None:
        return self._holder.get(process_id)

    def assign(
        self,
        worker: W,
        process_id: str,
        chat_base: int,
        recent: Callable[[str, int], list[ChatRecord]],
    ) -> TurnChat:
        """The chat of a turn handed to `worker`: none when the worker holds it through
        `chat_base`; else the recent messages memory holds (`recent`), which the worker then
        holds when they are all of them."""
        held = self._held.get(worker)
        if chat_base > 0 and held is not None and held.get(process_id) == chat_base:
            return TurnChat(held=True)
        messages = recent(process_id, chat_base)
        if messages and len(messages) == min(chat_base, RECENT_CHAT):
            self._hold(worker, process_id, chat_base)
        else:
            self._drop(worker, process_id)
        return TurnChat(recent=messages)

    def acked(self, worker: W, process_id: str, through: int | None) -> None:
        """A commit ack went to `worker`: with the turn's chat (`through` the count it holds
        now), or without (None: the worker lets the chat go)."""
        if through is None:
            self._drop(worker, process_id)
        else:
            self._hold(worker, process_id, through)

    def forget(self, process_id: str) -> None:
        """A process of a suspended, closed or deleted session: no worker is preferred for it
        any more (the worker lets its chat go itself)."""
        worker = self._holder.pop(process_id, None)
        if worker is not None:
            self._held[worker].pop(process_id, None)

    def drop_worker(self, worker: W) -> None:
        """The worker's stream ended: what it held goes with it."""
        for process_id in self._held.pop(worker, {}):
            if self._holder.get(process_id) is worker:
                del self._holder[process_id]

    def _hold(self, worker: W, process_id: str, through: int) -> None:
        """`worker` holds the process's chat through `through` now. Every other worker's copy
        is older from here on: it is forgotten, so `holder` never names a stale holder (whose
        turn would need the chat sent along again, and would move the chat back and forth)."""
        old = self._holder.get(process_id)
        if old is not None and old is not worker:
            self._held[old].pop(process_id, None)
        self._holder[process_id] = worker
        held = self._held.setdefault(worker, OrderedDict())
        held[process_id] = through
        held.move_to_end(process_id)
        while len(held) > HELD_MAX:
            evicted, _ = held.popitem(last=False)
            del self._holder[evicted]

    def _drop(self, worker: W, process_id: str) -> None:
        held = self._held.get(worker)
        if held is not None and held.pop(process_id, None) is not None:
            del self._holder[process_id]
