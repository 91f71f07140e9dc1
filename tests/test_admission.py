"""The pieces behind hundreds of turns in flight, without a system: the fair queue of waiting
turns, a worker's admission by event-loop lag and memory, and the partial reading of streamed
tool-call arguments."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

from engine_worker.admission import MIN_BUSY, Admission, rss_mb
from process_service.runtime.fair_queue import FairQueue
from vance.llm_core import ArgumentStream


def drain(queue: FairQueue) -> list[str]:
    out = []
    while queue:
        out.append(queue.pop())
    return out


def test_one_tenants_burst_does_not_starve_another_tenants_chat() -> None:
    queue = FairQueue()
    for i in range(100):
        queue.push(f"burst-{i}", tenant="big", session=f"s{i}")
    queue.push("chat", tenant="small", session="mine")
    order = drain(queue)
    assert order.index("chat") <= 1  # served within the first round of tenants
    assert len(order) == 101


def test_sessions_of_a_tenant_take_turns_and_keep_their_own_order() -> None:
    queue = FairQueue()
    for p in ("a1", "a2", "a3"):
        queue.push(p, tenant="t", session="a")
    queue.push("b1", tenant="t", session="b")
    assert queue.peek() == "a1"
    assert drain(queue) == ["a1", "b1", "a2", "a3"]


class Loop:
    """Admission's announcements, and a worker's running-turn count."""

    def __init__(self) -> None:
        self.running = 0
        self.said: list[tuple[int, str]] = []
        self.rss = 100.0


def admission(loop: Loop, *, max_rss_mb: float = 0) -> Admission:
    return Admission(
        slots=256,
        max_loop_lag_ms=100,
        max_rss_mb=max_rss_mb,
        running=lambda: loop.running,
        announce=lambda n, why: loop.said.append((n, why)),
        measure_rss=lambda: loop.rss,
    )


def test_a_lagging_event_loop_stops_new_turns_until_it_recovers() -> None:
    loop = Loop()
    a = admission(loop)
    loop.running = 40
    for _ in range(3):
        a.observe(0.01, busy=0.95)  # keeping up: nothing said
    assert loop.said == []
    for _ in range(10):
        a.observe(0.4, busy=1.0)  # far behind, and its own turns keep it so
    assert loop.said[0][0] == 40 and "lag" in loop.said[0][1]
    assert a.capacity == 40
    for _ in range(40):
        a.observe(0.0, busy=0.9)
    assert loop.said[-1] == (256, "recovered")


def test_a_loop_that_lags_waiting_for_a_core_keeps_taking_turns() -> None:
    # A CPU-bound host: the loop wakes late because other processes hold the cores, while its
    # own thread ran a fraction of the time. Queueing turns in process_service would only add
    # their wait (the same cores do the same work), so the worker keeps its full slots.
    loop = Loop()
    a = admission(loop)
    loop.running = 3
    for _ in range(50):
        a.observe(0.4, busy=0.3)
    assert loop.said == []
    assert a.capacity == 256


def test_a_capped_loop_takes_turns_again_once_it_is_no_longer_busy() -> None:
    loop = Loop()
    a = admission(loop)
    loop.running = 100
    for _ in range(10):
        a.observe(0.3, busy=1.0)
    assert a.capacity == 100
    for _ in range(10):
        a.observe(0.3, busy=0.2)  # still late, but others hold the cores now
    assert loop.said[-1] == (256, "recovered")


def test_memory_above_the_bound_stops_new_turns() -> None:
    loop = Loop()
    a = admission(loop, max_rss_mb=500)
    loop.running = 7
    loop.rss = 900
    for _ in range(10):
        a.observe(0.0, busy=0.1)
    assert loop.said == [(7, "memory above 500 MB")]
    loop.rss = 200
    a.observe(0.0, busy=0.1)
    assert loop.said[-1] == (256, "recovered")


def _off_the_core(seconds: float) -> None:
    """Blocks the loop's thread without using a core, as a process waiting for one does."""
    time.sleep(seconds)


def test_the_sampler_tells_a_blocked_loop_from_a_busy_one() -> None:
    """The real sampler on a real loop: blocked without using a core (as a process waiting for
    one is) it measures the lag and a low busy share, and keeps the full slots."""

    async def scenario() -> Admission:
        loop = Loop()
        loop.running = 5
        a = admission(loop)
        sampler = asyncio.create_task(a.run())
        deadline = time.monotonic() + 30
        while a.lag_s < 0.1 and time.monotonic() < deadline:
            _off_the_core(0.3)
            await asyncio.sleep(0)
            await asyncio.sleep(0.05)  # a tick runs, late
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        assert loop.said == []
        return a

    a = asyncio.run(scenario())
    assert a.lag_s >= 0.1
    assert a.busy < MIN_BUSY
    assert a.capacity == 256


def test_rss_is_read_from_proc() -> None:
    before = rss_mb()
    held = bytearray(64 * 2**20)
    held[::4096] = b"x" * len(held[::4096])  # touched, so resident
    assert rss_mb() > before + 32
    del held


def test_a_streamed_argument_yields_exactly_what_the_model_added() -> None:
    message = 'Line one,\nthen "quoted" and unicode \u00e9\u4e2d and a tab\t.'
    raw = json.dumps({"message": message, "awaiting_user_input": False})
    stream = ArgumentStream("message")
    # One character at a time: half escapes and half \u sequences included.
    parts = [stream.feed(ch) for ch in raw]
    assert "".join(parts) == message
    assert sum(1 for p in parts if p) > 10


def test_an_argument_before_the_streamed_one_is_not_streamed() -> None:
    stream = ArgumentStream("message")
    raw = json.dumps({"source": "worker-1", "message": "hello"})
    assert "".join(stream.feed(raw[i : i + 3]) for i in range(0, len(raw), 3)) == "hello"


def test_a_long_answer_streams_whole_split_anywhere() -> None:
    # Past the 256 KB the prefix-rereading parser gave up at, with escapes and surrogate pairs
    # (`\ud83d\ude00` as the model writes them with ensure_ascii) cut at every possible place.
    message = ('a "quote", a back\\slash, a line\nand \u00e9\u4e2d\U0001f600 ' * 6000)[:300_000]
    raw = json.dumps({"source": "x", "message": message, "awaiting_user_input": False})
    stream = ArgumentStream("message")
    parts = [stream.feed(raw[i : i + 5]) for i in range(0, len(raw), 5)]
    assert "".join(parts) == message
    assert all(not p or not ("\ud800" <= p[-1] <= "\udbff") for p in parts)  # no half pair


def test_a_closed_message_streams_nothing_after_it() -> None:
    stream = ArgumentStream("message")
    raw = json.dumps({"message": "hi", "note": "not streamed \\ at all"})
    assert [stream.feed(raw[:16]), stream.feed(raw[16:])] == ["hi", ""]
