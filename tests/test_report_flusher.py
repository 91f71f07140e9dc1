"""The worker's one clock for its turns' held reports (engine_worker/reports.py `Flusher`): the
turns whose coalescing windows end together send in one event-loop step, so the worker's stream
writes them as one message (engine_worker/worker.py), and no report goes before its window
allows or is lost.

Pure asyncio, no system: what goes out is recorded with the loop step and time it went in;
the stream itself is run by tests/test_streamed_answers.py. Only lower bounds on time are
asserted (a timer never fires early; on a loaded machine it may fire late)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import uvloop

from engine_worker import protocol as ew
from engine_worker.reports import (
    CHUNK_WINDOW_S,
    EARLY_S,
    FIRST_CHUNK_EARLY_S,
    FIRST_CHUNK_WINDOW_S,
    EventPublisher,
    Flusher,
)
from tests.harness import eventually
from vance.domain import ChatRole


@dataclass
class Sent:
    report: ew.ToServer
    step: int  # the event-loop step it went out in
    at: float  # loop time


class Recorder:
    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self.step = 0

    def send(self, report: ew.ToServer) -> None:
        self.sent.append(Sent(report, self.step, asyncio.get_running_loop().time()))

    async def tick(self) -> None:
        while True:
            self.step += 1
            await asyncio.sleep(0)

    async def until(self, count: int) -> None:
        await eventually(lambda: len(self.sent) >= count, interval=0.001, what=f"{count} sent")


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    out = Recorder()
    async with asyncio.TaskGroup() as tg:
        ticker = tg.create_task(out.tick())
        yield out
        ticker.cancel()


def _text(sent: Sent) -> str:
    assert isinstance(sent.report, ew.Chunk)
    return sent.report.text


async def test_turns_whose_windows_end_together_send_in_one_step(recorder: Recorder) -> None:
    flusher = Flusher(recorder.send)
    loop = asyncio.get_running_loop()
    a, b, c = (EventPublisher(f"turn-{n}", flusher) for n in "abc")
    for p in (a, b, c):
        await p.chunk("first ")  # each turn's first chunk: its own short window
    await recorder.until(3)
    recorder.sent.clear()

    started = loop.time()
    await a.chunk("A")
    # b's window ends within EARLY_S after a's: it goes with a's; c's ends later than that,
    # so it waits for its own.
    b.hold(ew.Progress("turn-b", "PLAN", {"n": 1}), CHUNK_WINDOW_S + EARLY_S / 2)
    c.hold(ew.Progress("turn-c", "PLAN", {"n": 2}), CHUNK_WINDOW_S + 3 * EARLY_S)
    await recorder.until(3)

    first, second, third = recorder.sent
    assert _text(first) == "A"
    assert [s.report for s in (second, third)] == [
        ew.Progress("turn-b", "PLAN", {"n": 1}),
        ew.Progress("turn-c", "PLAN", {"n": 2}),
    ]
    assert first.step == second.step != third.step
    assert first.at >= started + CHUNK_WINDOW_S
    assert third.at >= started + CHUNK_WINDOW_S + 2 * EARLY_S


async def test_a_turns_chunks_coalesce_within_their_windows(recorder: Recorder) -> None:
    flusher = Flusher(recorder.send)
    loop = asyncio.get_running_loop()
    turn = EventPublisher("turn-1", flusher)
    started = loop.time()
    await turn.chunk("Hel")
    await turn.chunk("lo")
    await recorder.until(1)
    assert _text(recorder.sent[0]) == "Hello"
    assert recorder.sent[0].at >= started + FIRST_CHUNK_WINDOW_S - FIRST_CHUNK_EARLY_S

    later = loop.time()
    for piece in (" wor", "ld", "!"):
        await turn.chunk(piece)
    await recorder.until(2)
    assert _text(recorder.sent[1]) == " world!"
    assert recorder.sent[1].at >= later + CHUNK_WINDOW_S - EARLY_S


async def test_what_the_commit_takes_is_never_sent_again(recorder: Recorder) -> None:
    flusher = Flusher(recorder.send)
    turn = EventPublisher("turn-1", flusher)
    other = EventPublisher("turn-2", flusher)
    await turn.chunk("Hello")
    turn.append("m1", ChatRole.ASSISTANT, "Hello.", None)
    taken = turn.take()  # the commit carries them
    assert [type(r) for r in taken] == [ew.Chunk, ew.ChatAppend]
    await other.chunk("Bye")  # another turn's window still ends and sends
    await recorder.until(1)
    await asyncio.sleep(CHUNK_WINDOW_S * 2)
    assert [s.report for s in recorder.sent] == [ew.Chunk("turn-2", ChatRole.ASSISTANT, "Bye")]


def test_a_flush_that_outlasts_the_next_window_keeps_the_clock_running() -> None:
    """Under uvloop (the services' loop), a timer set for a time already past is a plain
    Handle without `when()`. When sending one turn's reports takes longer than the gap to the
    next turn's window (a busy worker), the flusher's next timer is such a one, and a turn
    that reports in the loop's next step (a model's chunk arriving) arms the flusher while it
    stands: that must work, and every report still go out (it failed the turn before)."""

    async def scenario() -> tuple[list[str], list[BaseException]]:
        loop = asyncio.get_running_loop()
        sent: list[str] = []
        errors: list[BaseException] = []

        def report_c() -> None:
            try:
                c.hold(ew.Progress("turn-c", "PLAN", {}), CHUNK_WINDOW_S)
            except Exception as exc:
                errors.append(exc)

        def send(report: ew.ToServer) -> None:
            assert isinstance(report, ew.Progress)
            sent.append(report.turn_id)
            if report.turn_id == "turn-a":
                # A busy send: the loop's clock passes turn-b's window before it returns, and
                # turn-c reports in the next step.
                busy_until = loop.time() + 0.03
                while loop.time() < busy_until:
                    pass
                loop.call_soon(report_c)

        flusher = Flusher(send)
        a, b, c = (EventPublisher(f"turn-{n}", flusher) for n in "abc")
        a.hold(ew.Progress("turn-a", "PLAN", {}), 0.01)
        b.hold(ew.Progress("turn-b", "PLAN", {}), 0.01 + 2 * EARLY_S)
        await eventually(lambda: len(sent) == 3 or bool(errors), interval=0.001, what="all sent")
        return sent, errors

    sent, errors = uvloop.run(scenario())
    assert errors == []
    assert sent == ["turn-a", "turn-b", "turn-c"]
