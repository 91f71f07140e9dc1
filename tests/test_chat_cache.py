"""process_service's chat cache (process_service/store/chat_cache.py) stays within its bounds and
forgets a process on request; what it serves is checked end to end by the flow tests."""

from __future__ import annotations

from process_service.process_model import ChatRecord
from process_service.store.chat_cache import PER_PROCESS, ChatCache
from vance.domain import ChatRole


def _message(pid: str, n: int) -> ChatRecord:
    return ChatRecord(f"{pid}:{n:08d}", "s1", pid, "chat", ChatRole.USER, "hi", 0)


def test_the_cache_keeps_recent_messages_within_its_bounds_and_forgets_on_request() -> None:
    cache = ChatCache(max_messages=1_000)
    for n in range(1, PER_PROCESS + 51):
        cache.put("p1", n, _message("p1", n))
    # Per process only the newest PER_PROCESS numbers stay.
    assert cache.size == PER_PROCESS
    assert cache.get("p1", range(1, 51)) == {}
    assert set(cache.get("p1", range(51, PER_PROCESS + 51))) == set(range(51, PER_PROCESS + 51))
    # Over the total, the least recently used process goes first.
    for pid in ("p2", "p3", "p4", "p5"):
        for n in range(1, 201):
            cache.put(pid, n, _message(pid, n))
    assert cache.size <= 1_000
    assert cache.get("p1", range(51, 60)) == {}
    assert len(cache.get("p5", range(1, 201))) == 200
    cache.forget(["p5", "p4"])
    assert cache.get("p5", range(1, 201)) == {} and cache.size <= 400
