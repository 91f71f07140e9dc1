"""Creating processes and the user operations on them: pause, resume, stop, session pause."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from process_service.events import NOTICE
from process_service.lanes import Lanes
from process_service.outbox import entry_fields
from process_service.parent_notify import stop_entry
from process_service.store import ProcessStore, public_fields
from vance.domain import (
    CloseReason,
    LifecycleCall,
    ProcessStatus,
    SteerMessage,
    ThinkProcess,
    steer_from_dict,
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

Kick = Callable[[str, str], None]
CancelTurn = Callable[[str], None]
NotifyStopped = Callable[[dict[str, Any] | None], Awaitable[None]]


class Processes:
    def __init__(
        self,
        store: ProcessStore,
        lanes: Lanes,
        kick: Kick,
        cancel_turn: CancelTurn,
        *,
        on_stopped: NotifyStopped | None = None,
    ) -> None:
        self._store = store
        self._lanes = lanes
        self._kick = kick
        self._cancel_turn = cancel_turn
        self.on_stopped = on_stopped  # the parent's STOPPED event (parent_notify.py)

    async def create(
        self,
        spec: ThinkProcess,
        *,
        idempotency_key: str,
        start: bool,
        spawned_by: dict[str, Any] | None = None,
    ) -> ThinkProcess:
        """`spawned_by`: the parent's document, when a process tool spawns the child (its
        session's stream gets a process-spawned event)."""
        if not spec.session_id or not spec.name or not spec.engine:
            raise InvalidArgumentError("session_id, name and engine are required")
        if idempotency_key:
            digest = hashlib.sha256(f"{spec.session_id}:{idempotency_key}".encode()).hexdigest()
            pid = f"proc_{digest[:24]}"
            existing = await self._store.get(pid)
            if existing is not None:
                return _model(existing)
        else:
            pid = new_id("proc")
        owner = await self._store.reserve_name(spec.session_id, spec.name, pid)
        if owner is not None and owner != pid:
            raise AlreadyExistsError(
                f"a process named {spec.name!r} exists in this session", reason="name_taken"
            )
        now = self._lanes.clock.now_ms()
        doc = spec.model_dump(mode="json", exclude={"id", "pending_count", "recipe_snapshot"})
        # The snapshot is immutable and large: it lives in its own document, so the
        # compare-and-set updates of every turn do not rewrite it.
        await self._store.put_snapshot(pid, spec.recipe_snapshot)
        doc.update(
            _id=pid,
            status=ProcessStatus.INIT.value,
            close_reason=None,
            created_at_ms=now,
            updated_at_ms=now,
            wake=start,
            started=False,
            chat_count=0,
        )
        try:
            await self._store.insert_process(doc)
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
            doc = await self._store.get(pid) or doc
            return _model(doc)
        await self._store.index_in_session(spec.session_id, pid)
        if spawned_by is not None:
            # Queued before the INIT status event, so both go out in its one write.
            self._lanes.events.submit(spec.session_id, NOTICE, _spawned(spawned_by, doc))
        await self._lanes.status_event(doc, ProcessStatus.INIT, ProcessStatus.INIT)
        if start:
            self._kick(pid, spec.engine)
        return _model(doc)

    async def started(self, process_id: str, timeout_s: float) -> ThinkProcess:
        """The process once a lane took it (RUNNING, or further), or as it is after `timeout_s`
        (no free worker slot came, or another replica took the lane and this one saw no
        status change)."""
        moved = self._lanes.past_init(process_id)
        try:
            doc = await self.get(process_id)
            if doc["status"] == ProcessStatus.INIT.value:
                try:
                    async with asyncio.timeout(timeout_s):
                        await moved.wait()
                except TimeoutError:
                    pass
                doc = await self.get(process_id)
        finally:
            self._lanes.forget_past_init(process_id)
        return _model(doc)

    async def get(self, process_id: str) -> dict[str, Any]:
        doc = await self._store.get(process_id)
        if doc is None:
            raise NotFoundError(f"no process {process_id!r}", reason="process_not_found")
        return doc

    async def count_persistent_call(self, process_id: str) -> None:
        """A tool with a persistent effect succeeded for this process (tool_specs.py)."""
        await self._store.update(
            process_id, {}, {"$inc": {"persistent_tool_calls": 1}}, after=False
        )

    async def get_with_snapshot(self, process_id: str) -> dict[str, Any]:
        """The process document with its recipe snapshot (kept in its own collection)."""
        doc = await self.get(process_id)
        return {**doc, "recipe_snapshot": await self._store.snapshot(process_id)}

    async def resolve(self, process_id: str, session_id: str, name: str) -> dict[str, Any]:
        if not process_id:
            if not (session_id and name):
                raise InvalidArgumentError("name the process by id, or by session id and name")
            found = await self._store.lookup_name(session_id, name)
            if found is None:
                raise NotFoundError(f"no process named {name!r}", reason="process_not_found")
            process_id = found
        doc = await self.get(process_id)
        if session_id and doc.get("session_id") != session_id:
            # A client bound to one session cannot reach another session's processes.
            raise NotFoundError(
                f"no process {process_id!r} in this session", reason="process_not_found"
            )
        return doc

    async def chat(
        self, process_id: str, session_id: str, *, limit: int, through: int
    ) -> list[dict[str, Any]]:
        """The process's chat messages, oldest first: the last `limit` (all when 0) of those
        up to number `through` (all committed ones, and a running turn's, when 0)."""
        if through > 0 and process_id and not session_id:
            # An engine's own history: the worker knows how far it reaches (no process read).
            count = through
        else:
            doc = await self.resolve(process_id, session_id, "")
            count = int(doc.get("chat_count", 0))
            if doc.get("lane"):
                # A running turn may have appended beyond the committed count.
                count += 64
            if through > 0:
                count = min(count, through)
        first = 1 if limit <= 0 else max(1, count - limit + 1)
        docs = await self._store.chat_range(process_id, first, count)
        return docs[-limit:] if limit > 0 else docs

    async def pending(self, process_id: str, exclude: set[str]) -> list[SteerMessage]:
        """The inbox messages a process holds (owned by its turn, then pending)."""
        doc = await self.get(process_id)
        return [
            steer_from_dict(m)
            for m in [*(doc.get("owned") or []), *(doc.get("pending") or [])]
            if m.get("id") not in exclude
        ]

    async def in_session(
        self, session_id: str, *, include_terminated: bool, parent_id: str = ""
    ) -> list[ThinkProcess]:
        docs = await self._store.get_many(await self._store.session_process_ids(session_id))
        out = [
            _model(d)
            for d in docs
            if (include_terminated or d["status"] != ProcessStatus.CLOSED.value)
            and (not parent_id or d.get("parent_process_id") == parent_id)
        ]
        out.sort(key=lambda p: (p.created_at_ms, p.id))
        return out

    async def in_sessions(
        self, session_ids: list[str], *, include_terminated: bool
    ) -> dict[str, list[ThinkProcess]]:
        """`in_session` for many sessions: two reads for all of them instead of two each."""
        index = await self._store.sessions_process_ids(session_ids)
        docs = await self._store.get_many([pid for ids in index.values() for pid in ids])
        out: dict[str, list[ThinkProcess]] = {sid: [] for sid in session_ids}
        for d in docs:
            sid = str(d.get("session_id", ""))
            if sid in out and (include_terminated or d["status"] != ProcessStatus.CLOSED.value):
                out[sid].append(_model(d))
        for found in out.values():
            found.sort(key=lambda p: (p.created_at_ms, p.id))
        return out

    async def pause(self, doc: dict[str, Any], *, allow_init: bool = False) -> dict[str, Any]:
        status = ProcessStatus(doc["status"])
        pid = str(doc["_id"])
        if status is ProcessStatus.INIT and not allow_init:
            raise FailedPreconditionError("the process has not started yet", reason="process_init")
        if status is ProcessStatus.CLOSED:
            raise FailedPreconditionError("the process is closed", reason="process_closed")
        if status in (ProcessStatus.PAUSED, ProcessStatus.SUSPENDED):
            return doc
        now = self._lanes.clock.now_ms()
        paused = await self._store.update(
            pid,
            {"lane": None, "status": {"$in": ["IDLE", "BLOCKED", "INIT"]}},
            {"$set": {"status": ProcessStatus.PAUSED.value, "updated_at_ms": now}},
        )
        if paused is not None:
            await self._lanes.status_event(paused, status, ProcessStatus.PAUSED)
            return paused
        # A turn runs: it finishes, and its commit leaves the process PAUSED.
        running = await self._store.update(
            pid, {"status": ProcessStatus.RUNNING.value}, {"$set": {"pause_requested": True}}
        )
        if running is not None:
            # Every client of the session shows the pause on its way (docs/protocol.md).
            await self._lanes.events.publish(
                str(running["session_id"]), NOTICE, _halt_requested(running)
            )
        return running or await self.get(pid)

    async def resume(self, doc: dict[str, Any]) -> dict[str, Any]:
        status = ProcessStatus(doc["status"])
        pid = str(doc["_id"])
        if status is ProcessStatus.INIT:
            raise FailedPreconditionError("the process has not started yet", reason="process_init")
        if status is ProcessStatus.CLOSED:
            raise FailedPreconditionError("the process is closed", reason="process_closed")
        if status is ProcessStatus.RUNNING:
            updated = await self._store.update(pid, {}, {"$unset": {"pause_requested": ""}})
            return updated or doc
        if status not in (ProcessStatus.PAUSED, ProcessStatus.SUSPENDED):
            return doc
        started = bool(doc.get("started"))
        target = ProcessStatus.IDLE if started else ProcessStatus.INIT
        # Everything queued while paused is handled by one resume turn.
        wake = bool(doc.get("pending_keys")) or not started
        resumed = await self._store.update(
            pid,
            {"status": status.value},
            {
                "$set": {
                    "status": target.value,
                    "wake": wake,
                    "call": "RESUME",
                    "updated_at_ms": self._lanes.clock.now_ms(),
                },
                # A suspend hook no worker took yet no longer applies.
                "$unset": {"hook": ""},
            },
        )
        if resumed is None:
            return await self.get(pid)
        await self._lanes.status_event(resumed, status, target)
        if wake:
            self._kick(pid, str(resumed["engine"]))
        return resumed

    async def stop(
        self, doc: dict[str, Any], *, stopped_by: str = "", allow_init: bool = False
    ) -> dict[str, Any]:
        """Closes the process STOPPED. A user's stop of an INIT process is refused (nothing
        runs yet); `allow_init` is the parent's cutoff (process_service/delegate.py), which
        must keep a child that no lane took yet from starting later."""
        status = ProcessStatus(doc["status"])
        pid = str(doc["_id"])
        if status is ProcessStatus.INIT and not allow_init:
            raise FailedPreconditionError("the process has not started yet", reason="process_init")
        if status is ProcessStatus.CLOSED:
            return doc
        hook = self._lanes.hook_fields(doc, LifecycleCall.STOP)
        parent = str(doc.get("parent_process_id") or "")
        # The parent hears of the stop (unless it stopped the child itself): the entry is
        # written with the stop (process_service/outbox.py).
        owed = [] if parent in ("", stopped_by) else [stop_entry(stopped_by)]
        before = await self._store.update(
            pid,
            {"status": {"$ne": ProcessStatus.CLOSED.value}},
            {
                "$set": {
                    "status": ProcessStatus.CLOSED.value,
                    "close_reason": CloseReason.STOPPED.value,
                    "stopped_by": stopped_by,
                    "wake": False,
                    "updated_at_ms": self._lanes.clock.now_ms(),
                    **hook,
                    **entry_fields(owed),
                },
                "$unset": {
                    "lane": "",
                    "pause_requested": "",
                    "call": "",
                    **({} if hook else {"hook": ""}),
                },
            },
            after=False,
        )
        if before is None:
            return await self.get(pid)
        if hook:
            self._kick(pid, str(before["engine"]))
        lane = before.get("lane") or {}
        if lane.get("turn_id"):
            self._cancel_turn(str(lane["turn_id"]))
        after = await self.get(pid)
        await self._lanes.status_event(after, ProcessStatus(before["status"]), ProcessStatus.CLOSED)
        if owed and self.on_stopped is not None:
            await self.on_stopped(after)
        return after

    async def pause_session(self, session_id: str) -> list[dict[str, Any]]:
        """ESC: pauses what has something to interrupt (RUNNING, INIT); leaves the rest."""
        docs = await self._store.get_many(await self._store.session_process_ids(session_id))
        paused = []
        for doc in docs:
            if doc["status"] in (ProcessStatus.RUNNING.value, ProcessStatus.INIT.value):
                paused.append(await self.pause(doc, allow_init=True))
        return paused


def _halt_requested(doc: dict[str, Any]) -> dict[str, Any]:
    """The `engine-halt-requested` frame: a RUNNING engine pauses when its turn ends."""
    return {
        "type": "engine-halt-requested",
        "data": {
            "processId": str(doc["_id"]),
            "processName": str(doc.get("name", "")),
            "engine": str(doc.get("engine", "")),
        },
    }


def _spawned(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """The `process-spawned` frame (docs/protocol.md), in the parent's session."""
    return {
        "type": "process-spawned",
        "data": {
            "processId": str(parent["_id"]),
            "processName": str(parent.get("name", "")),
            "childProcessId": str(child["_id"]),
            "childProcessName": str(child.get("name", "")),
            "goal": str(child.get("goal", "")),
            "engine": str(child.get("engine", "")),
            "recipe": str(child.get("recipe_name", "") or ""),
        },
    }


def _model(doc: dict[str, Any]) -> ThinkProcess:
    return ThinkProcess.model_validate(public_fields(doc))
