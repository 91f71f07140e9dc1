"""A service's long-running tasks, owned by one TaskGroup: a failure is logged and reported.

Every service starts work that outlives the call that starts it (session_service's sweeps and
indexer, the gateway's lease renewals, recipe_service's model warm-up, tool_service's MCP hub).
Each runs here, inside a TaskGroup held by one runner task that `stop()` cancels and awaits, so
nothing is fire-and-forget and nothing fails unseen: a task that raises, or that was meant to
run for the server's life and returns, is logged and recorded in `failures`, and `on_failure`
tells the owner (GrpcHost sets gRPC health NOT_SERVING, the gateway's /healthz says so). One
task's failure does not cancel the others: the group stays up so the service keeps doing what
it still can while its health reports the loss."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

logger = logging.getLogger(__name__)

# A task's body: any coroutine whose result is dropped (the tasks are run for their effects).
Job = Coroutine[Any, Any, object]
OnFailure = Callable[[str, str], Awaitable[None]]


class Background:
    """Runs named tasks in one TaskGroup until `stop()`.

    `forever=True` (the default) marks a task meant to run until the service stops: its return
    is a failure too. `best_effort=True` marks work whose failure costs nothing lasting (a
    warm-up the first real call repeats): logged only, not reported as ill health."""

    def __init__(self, name: str, *, on_failure: OnFailure | None = None) -> None:
        self._name = name
        self._on_failure = on_failure
        self._group: asyncio.TaskGroup | None = None
        self._runner: asyncio.Task[None] | None = None
        self._pending: list[tuple[str, Job]] = []
        self._stopping = False
        self.failures: dict[str, str] = {}

    @property
    def healthy(self) -> bool:
        return not self.failures

    def start(
        self, name: str, job: Job, *, forever: bool = True, best_effort: bool = False
    ) -> None:
        """Starts `job` in the group (from inside the running loop)."""
        if self._stopping:
            job.close()
            raise RuntimeError(f"{self._name}: cannot start {name!r} while stopping")
        guarded = self._guard(name, job, forever=forever, best_effort=best_effort)
        if self._group is not None:
            self._group.create_task(guarded, name=name)
            return
        self._pending.append((name, guarded))
        if self._runner is None:
            # The runner is the group's owner; stop() cancels and awaits it.
            self._runner = asyncio.get_running_loop().create_task(
                self._run(), name=f"{self._name}-background"
            )

    async def _run(self) -> None:
        async with asyncio.TaskGroup() as group:
            self._group = group
            pending, self._pending = self._pending, []
            for name, job in pending:
                group.create_task(job, name=name)
            # Until stop() cancels this task; the TaskGroup then cancels and awaits every child.
            await asyncio.Event().wait()

    async def _guard(self, name: str, job: Job, *, forever: bool, best_effort: bool) -> None:
        try:
            await job
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.exception("%s: background task %s failed", self._name, name)
            await self._failed(name, f"{type(exc).__name__}: {exc}", best_effort=best_effort)
            return
        if forever and not self._stopping:
            logger.error("%s: background task %s ended while the service runs", self._name, name)
            await self._failed(name, "ended", best_effort=best_effort)

    async def _failed(self, name: str, reason: str, *, best_effort: bool) -> None:
        if best_effort:
            return
        self.failures[name] = reason
        if self._on_failure is not None:
            try:
                await self._on_failure(name, reason)
            except Exception:
                logger.exception("%s: reporting the failure of %s failed", self._name, name)

    async def stop(self) -> None:
        """Cancels every task and waits for them; idempotent."""
        self._stopping = True
        for _, job in self._pending:
            job.close()
        self._pending = []
        runner, self._runner = self._runner, None
        if runner is None:
            return
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        self._group = None
