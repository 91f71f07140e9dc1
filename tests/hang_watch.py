"""A hung test fails with the stacks of the event loop's tasks, not only of its threads.

pytest-timeout (pyproject.toml `timeout`) fails a test that runs too long; its signal method
prints the threads' stacks first. In an async test the main thread then sits in the event
loop's select, which names no test code: the await that hangs is in a task's stack. This
prints every task's stack to stderr before pytest-timeout's own handler fails the test, so it
lands in the failure's "Captured stderr" (also under xdist, whose workers' terminal is not
shown)."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import Any

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Generator[None, Any, Any]:
    result = yield
    handler = signal.getsignal(signal.SIGALRM)
    if callable(handler) and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGALRM, _tasks_first(item, handler))
    return result


def _tasks_first(
    item: pytest.Item, handler: Callable[[int, FrameType | None], Any]
) -> Callable[[int, FrameType | None], Any]:
    def dump_then_fail(signum: int, frame: FrameType | None) -> Any:
        __tracebackhide__ = True
        loop = asyncio._get_running_loop()  # the handler runs on the loop's thread, if any
        if loop is not None:
            tasks = asyncio.all_tasks(loop)
            print(f"\n+++ {item.nodeid} timed out: {len(tasks)} tasks +++", file=sys.stderr)
            for task in tasks:
                print(f"--- {task!r}", file=sys.stderr)
                task.print_stack(file=sys.stderr)
        return handler(signum, frame)

    return dump_then_fail
