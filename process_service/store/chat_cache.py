"""Recent chat messages in process_service's memory. A stored chat message never changes (its
id is `<process>:<number>`, a redo's second insert is refused), so a copy read or written here
stays true: an engine's history read each turn comes from memory, and only numbers not held
are read from the store. Bounded by message count, least recently used process first; a
process's entries are dropped when its session is suspended, closed or deleted, so a
suspended session holds no memory here."""

from __future__ import annotations

from collections import OrderedDict

from process_service.process_model import ChatRecord

MAX_MESSAGES = 20_000
PER_PROCESS = 256  # more than any history read (engines read at most 100)


class ChatCache:
    def __init__(self, max_messages: int = MAX_MESSAGES) -> None:
        self._max = max_messages
        self._by_process: OrderedDict[str, dict[int, ChatRecord]] = OrderedDict()
        self._size = 0

    def get(self, process_id: str, numbers: range) -> dict[int, ChatRecord]:
        held = self._by_process.get(process_id)
        if not held:
            return {}
        self._by_process.move_to_end(process_id)
        return {n: held[n] for n in numbers if n in held}

    def put(self, process_id: str, number: int, record: ChatRecord) -> None:
        held = self._by_process.get(process_id)
        if held is None:
            held = self._by_process[process_id] = {}
        self._by_process.move_to_end(process_id)
        if number not in held:
            self._size += 1
        held[number] = record
        if len(held) > PER_PROCESS:
            for old in sorted(held)[: len(held) - PER_PROCESS]:
                del held[old]
                self._size -= 1
        while self._size > self._max and self._by_process:
            _, dropped = self._by_process.popitem(last=False)
            self._size -= len(dropped)

    def forget(self, process_ids: list[str]) -> None:
        for pid in process_ids:
            dropped = self._by_process.pop(pid, None)
            if dropped:
                self._size -= len(dropped)

    @property
    def size(self) -> int:
        return self._size
