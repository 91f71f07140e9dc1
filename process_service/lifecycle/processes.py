"""Creating processes and the user operations on them: pause, resume, stop, session pause."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from process_service.events.log import NOTICE
from process_service.models import NextTurn
from process_service.process_model import ChatRecord, Process
from process_service.runtime.lanes import Lanes
from process_service.runtime.parent_notify import stop_entry
from process_service.store.process_store import ProcessStore
from vance.domain import (
    LifecycleCall,
    ProcessStatus,
    SteerMessage,
    ThinkProcess,
)
from vance.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from vance.ids import new_id
from vance.store import is_duplicate_key

logger = logging.getLogger(__name__)

# Dispatcher.next_turn: asked after every transition that may make a turn due.
NextTurnOf = Callable[[Process], NextTurn]
CancelTurn = Callable[[str], None]
NotifyStopped = Callable[[Process | None], Awaitable[None]]


class Processes:
    def __init__(
        self,
        store: ProcessStore,
        lanes: Lanes,
        next_turn: NextTurnOf,
        cancel_turn: CancelTurn,
        *,
        on_stopped: NotifyStopped | None = None,
    ) -> None:
        self._store = store
        self._lanes = lanes
        self._next_turn = next_turn
        self._cancel_turn = cancel_turn
        self.on_stopped = on_stopped  # the parent's STOPPED event (parent_notify.py)

    async def create(
        self,
        spec: ThinkProcess,
        *,
        idempotency_key: str,
        start: bool,
        spawned_by: Process | None = None,
    ) -> ThinkProcess:
        """`spawned_by`: the parent, when a process tool spawns the child (its
        session's stream gets a process-spawned event)."""
        if not spec.session_id or not spec.name or not spec.engine:
            raise InvalidArgumentError("session_id, name and engine are required")
        if idempotency_key:
            digest = hashlib.sha256(f"{spec.session_id}:{idempotency_key}".encode()).hexdigest()
            pid = f"proc_{digest[:24]}"
            existing = await self._store.get(pid)
            if existing is not None:
                return existing.think_process()
        else:
            pid = new_id("proc")
        owner = await self._store.reserve_name(spec.session_id, spec.name, pid)
        if owner is not None and owner != pid:
            raise AlreadyExistsError(
                f"a process named {spec.name!r} exists in this session", reason="name_taken"
            )
        now = self._lanes.clock.now_ms()
        process = Process(
            id=pid,
            session_id=spec.session_id,
            name=spec.name,
            engine=spec.engine,
            tenant_id=spec.tenant_id,
            project_id=spec.project_id,
            title=spec.title,
            goal=spec.goal,
            engine_version=spec.engine_version,
            recipe_name=spec.recipe_name,
            parent_process_id=spec.parent_process_id,
            owner_user_id=spec.owner_user_id,
            close_detail=spec.close_detail,
            params=spec.params,
            chat_history_summary=spec.chat_history_summary,
            chat_history_summary_through=spec.chat_history_summary_through,
            last_suspend_cause=spec.last_suspend_cause,
            persistent_tool_calls=spec.persistent_tool_calls,
            connection_profile=spec.connection_profile,
            created_at_ms=now,
            updated_at_ms=now,
            wake=start,
        )
        # The snapshot is immutable and large: it lives in its own document, so the
        # compare-and-set updates of every turn do not rewrite it.
        await self._store.put_snapshot(pid, spec.recipe_snapshot)
        try:
            await self._store.insert_process(process)
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
            return (await self._store.get(pid) or process).think_process()
        await self._store.index_in_session(spec.session_id, pid)
        if spawned_by is not None:
            # Queued before the INIT status event, so both go out in its one write.
            self._lanes.events.submit(spec.session_id, NOTICE, _spawned(spawned_by, process))
        await self._lanes.status_event(process, ProcessStatus.INIT, ProcessStatus.INIT)
        self._next_turn(process)
        return process.think_process()

    async def started(self, process_id: str, timeout_s: float) -> ThinkProcess:
        """The process once a lane took it (RUNNING, or further), or as it is after `timeout_s`
        (no free worker slot came, or another replica took the lane and this one saw no
        status change)."""
        moved = self._lanes.past_init(process_id)
        try:
            process = await self.get(process_id)
            if process.status is ProcessStatus.INIT:
                try:
                    async with asyncio.timeout(timeout_s):
                        await moved.wait()
                except TimeoutError:
                    pass
                process = await self.get(process_id)
        finally:
            self._lanes.forget_past_init(process_id)
        return process.think_process()

    async def get(self, process_id: str) -> Process:
        process = await self._store.get(process_id)
        if process is None:
            raise NotFoundError(f"no process {process_id!r}", reason="process_not_found")
        return process

    async def count_persistent_call(self, process_id: str) -> None:
        """A tool with a persistent effect succeeded for this process (tool_specs.py)."""
        await self._store.count_persistent_call(process_id)

    async def get_with_snapshot(self, process_id: str) -> Process:
        """The process with its recipe snapshot (kept in its own collection)."""
        process = await self.get(process_id)
        return replace(process, recipe_snapshot=await self._store.snapshot(process_id))

    async def resolve(self, process_id: str, session_id: str, name: str) -> Process:
        if not process_id:
            if not (session_id and name):
                raise InvalidArgumentError("name the process by id, or by session id and name")
            found = await self._store.lookup_name(session_id, name)
            if found is None:
                raise NotFoundError(f"no process named {name!r}", reason="process_not_found")
            process_id = found
        process = await self.get(process_id)
        if session_id and process.session_id != session_id:
            # A client bound to one session cannot reach another session's processes.
            raise NotFoundError(
                f"no process {process_id!r} in this session", reason="process_not_found"
            )
        return process

    async def chat(
        self, process_id: str, session_id: str, *, limit: int, through: int
    ) -> list[ChatRecord]:
        """The process's chat messages, oldest first: the last `limit` (all when 0) of those
        up to number `through` (all committed ones, and a running turn's, when 0)."""
        if through > 0 and process_id and not session_id:
            # An engine's own history: the worker knows how far it reaches (no process read).
            count = through
        else:
            process = await self.resolve(process_id, session_id, "")
            count = process.chat_count
            if process.lane is not None:
                # A running turn may have appended beyond the committed count.
                count += 64
            if through > 0:
                count = min(count, through)
        first = 1 if limit <= 0 else max(1, count - limit + 1)
        docs = await self._store.chat_range(process_id, first, count)
        return docs[-limit:] if limit > 0 else docs

    async def pending(self, process_id: str, exclude: set[str]) -> list[SteerMessage]:
        """The inbox messages a process holds (owned by its turn, then pending)."""
        process = await self.get(process_id)
        return [m.steer() for m in (*process.owned, *process.pending) if m.id not in exclude]

    async def in_session(
        self, session_id: str, *, include_terminated: bool, parent_id: str = ""
    ) -> list[ThinkProcess]:
        found = await self._store.get_many(await self._store.session_process_ids(session_id))
        out = [
            p.think_process()
            for p in found
            if (include_terminated or not p.closed)
            and (not parent_id or p.parent_process_id == parent_id)
        ]
        out.sort(key=lambda p: (p.created_at_ms, p.id))
        return out

    async def in_sessions(
        self, session_ids: list[str], *, include_terminated: bool
    ) -> dict[str, list[ThinkProcess]]:
        """`in_session` for many sessions: two reads for all of them instead of two each."""
        index = await self._store.sessions_process_ids(session_ids)
        every = await self._store.get_many([pid for ids in index.values() for pid in ids])
        out: dict[str, list[ThinkProcess]] = {sid: [] for sid in session_ids}
        for p in every:
            if p.session_id in out and (include_terminated or not p.closed):
                out[p.session_id].append(p.think_process())
        for found in out.values():
            found.sort(key=lambda p: (p.created_at_ms, p.id))
        return out

    async def pause(self, process: Process, *, allow_init: bool = False) -> Process:
        status = process.status
        pid = process.id
        if status is ProcessStatus.INIT and not allow_init:
            raise FailedPreconditionError("the process has not started yet", reason="process_init")
        if status is ProcessStatus.CLOSED:
            raise FailedPreconditionError("the process is closed", reason="process_closed")
        for _ in range(_PAUSE_ATTEMPTS):
            if process.holding or process.closed:
                return process
            paused = await self._store.pause_waiting(pid, self._lanes.clock.now_ms())
            if paused is not None:
                await self._lanes.status_event(paused, process.status, ProcessStatus.PAUSED)
                return paused
            # A turn runs: it finishes, and its commit leaves the process PAUSED.
            running = await self._store.request_pause(pid)
            if running is not None:
                # Every client of the session shows the pause on its way (docs/protocol.md).
                await self._lanes.events.publish(
                    running.session_id, NOTICE, _halt_requested(running)
                )
                return running
            # Neither matched: the turn committed (or one started) between the two writes.
            # Both are compare-and-sets, so reading the process again and retrying is safe.
            process = await self.get(pid)
        return process

    async def resume(self, process: Process) -> Process:
        status = process.status
        pid = process.id
        if status is ProcessStatus.INIT:
            raise FailedPreconditionError("the process has not started yet", reason="process_init")
        if status is ProcessStatus.CLOSED:
            raise FailedPreconditionError("the process is closed", reason="process_closed")
        if status is ProcessStatus.RUNNING:
            return await self._store.cancel_pause_request(pid) or process
        if not process.holding:
            return process
        target = ProcessStatus.IDLE if process.started else ProcessStatus.INIT
        # Everything queued while paused is handled by one resume turn.
        wake = bool(process.pending_keys) or not process.started
        resumed = await self._store.resume(
            pid, status, target, wake=wake, now_ms=self._lanes.clock.now_ms()
        )
        if resumed is None:
            return await self.get(pid)
        await self._lanes.status_event(resumed, status, target)
        self._next_turn(resumed)
        return resumed

    async def stop(
        self, process: Process, *, stopped_by: str = "", allow_init: bool = False
    ) -> Process:
        """Closes the process STOPPED. A user's stop of an INIT process is refused (nothing
        runs yet); `allow_init` is the parent's cutoff (process_service/tools/delegate.py), which
        must keep a child that no lane took yet from starting later."""
        status = process.status
        pid = process.id
        if status is ProcessStatus.INIT and not allow_init:
            raise FailedPreconditionError("the process has not started yet", reason="process_init")
        if status is ProcessStatus.CLOSED:
            return process
        hook = self._lanes.hook_for(process, LifecycleCall.STOP)
        parent = process.parent_process_id
        # The parent hears of the stop (unless it stopped the child itself): the entry is
        # written with the stop (process_service/runtime/outbox.py).
        owed = [] if parent in ("", stopped_by) else [stop_entry(stopped_by)]
        before = await self._store.stop(
            pid,
            stopped_by=stopped_by,
            hook=hook,
            now_ms=self._lanes.clock.now_ms(),
            outbox=owed,
        )
        if before is None:
            return await self.get(pid)
        if before.lane is not None:
            self._cancel_turn(before.lane.turn_id)
        after = await self.get(pid)
        # The STOP hook (a lane for it is free now that the turn's is gone).
        self._next_turn(after)
        await self._lanes.status_event(after, before.status, ProcessStatus.CLOSED)
        if owed and self.on_stopped is not None:
            await self.on_stopped(after)
        return after

    async def pause_session(self, session_id: str) -> list[Process]:
        """ESC: pauses what has something to interrupt (RUNNING, INIT); leaves the rest."""
        found = await self._store.get_many(await self._store.session_process_ids(session_id))
        paused = []
        for process in found:
            if process.status in (ProcessStatus.RUNNING, ProcessStatus.INIT):
                paused.append(await self.pause(process, allow_init=True))
        return paused


# Tries of pause's two compare-and-sets against a turn that starts and ends meanwhile.
_PAUSE_ATTEMPTS = 5


def _halt_requested(process: Process) -> dict[str, Any]:  # JSON: a client frame
    """The `engine-halt-requested` frame: a RUNNING engine pauses when its turn ends."""
    return {
        "type": "engine-halt-requested",
        "data": {"processId": process.id, "processName": process.name, "engine": process.engine},
    }


def _spawned(parent: Process, child: Process) -> dict[str, Any]:  # JSON: a client frame
    """The `process-spawned` frame (docs/protocol.md), in the parent's session."""
    return {
        "type": "process-spawned",
        "data": {
            "processId": parent.id,
            "processName": parent.name,
            "childProcessId": child.id,
            "childProcessName": child.name,
            "goal": child.goal,
            "engine": child.engine,
            "recipe": child.recipe_name,
        },
    }
