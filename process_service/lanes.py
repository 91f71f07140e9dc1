"""Lanes: at most one turn per process, taken by compare-and-set on the process document.

The lane lives in the process document (`lane`), so it holds across replicas and restarts:
- steer pushes the message onto `pending` and sets `wake` in one update;
- taking a turn moves `pending` to `owned` and writes `lane` in one update, only if no lane is
  held; a redo after a lost worker keeps `owned` and the turn id, so idempotency keys derived
  from the turn make the redo write nothing twice;
- commit archives `owned` as drained and clears `lane` in one update, only if the lane is still
  this turn's; a stale worker's commit is refused.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from process_service.events import STATUS_CHANGED, EventLog
from process_service.lane_signals import LaneSignals
from process_service.models import TurnRef
from process_service.outbox import OBSERVE, entry_fields
from process_service.parent_notify import PARENT, close_entry
from process_service.store import ProcessStore
from vance.clock import Clock
from vance.config import LanesConfig
from vance.domain import (
    HOOK_CALLS,
    WAKING,
    CloseReason,
    LifecycleCall,
    ProcessStatus,
)
from vance.ids import new_id

logger = logging.getLogger(__name__)

_LANE_FREE: dict[str, Any] = {"lane": None}
_CLEAR_TURN = {"lane": "", "owned": "", "owned_keys": "", "pause_requested": "", "call": ""}


class Lanes:
    def __init__(
        self,
        store: ProcessStore,
        events: EventLog,
        clock: Clock,
        config: LanesConfig,
        signals: LaneSignals,
    ) -> None:
        self.store = store
        self.events = events
        self.clock = clock
        self.config = config
        # Outbox entries written or found (outbox.py delivers them); every status change
        # (rollup_notify.py keeps the session's roll-up current).
        self._signals = signals
        # Processes someone waits to see leave INIT (process_create, process_service/tools.py).
        self._past_init: dict[str, asyncio.Event] = {}
        # engine -> the hooks (SUSPEND, STOP) its workers declared in their hello.
        self._hooks: dict[str, set[str]] = {}

    # ---- hooks ----

    def declare_hooks(self, hooks: dict[str, list[str]]) -> None:
        for engine, names in hooks.items():
            self._hooks.setdefault(engine, set()).update(names)

    def hook_fields(self, doc: dict[str, Any], call: LifecycleCall) -> dict[str, Any]:
        """The field that asks for a hook task, to be written with the transition itself: only
        for a process that has started (its engine ran start) and whose engine declared the
        hook. A hook runs at most once: a failure or a lost worker drops it (logged)."""
        engine = str(doc.get("engine", ""))
        if doc.get("started") and call.value in self._hooks.get(engine, ()):
            return {"hook": call.value}
        return {}

    async def _take_hook(self, doc: dict[str, Any], worker_id: str, now: int) -> TurnRef | None:
        """Takes the lane for a hook task (the status stays), or drops a hook lane whose worker
        was lost."""
        pid = str(doc["_id"])
        lane = doc.get("lane") or {}
        if lane:
            if lane.get("hook") and int(lane.get("lease_until_ms", 0)) < now:
                await self.store.update(
                    pid, {"lane.turn_id": lane.get("turn_id")}, {"$unset": {"lane": ""}}
                )
                logger.warning("hook %s of %s lost with its worker; dropped", lane["hook"], pid)
            return None
        kind = str(doc["hook"])
        turn_id = new_id("turn")
        lease_until = now + self.config.lease_ms
        after = await self.store.update(
            pid,
            {**_LANE_FREE, "hook": kind},
            {
                "$set": {
                    "lane": {
                        "turn_id": turn_id,
                        "attempt": 1,
                        "worker_id": worker_id,
                        "lease_until_ms": lease_until,
                        "hook": kind,
                    }
                },
                "$unset": {"hook": ""},
            },
        )
        if after is None:
            return None
        call = LifecycleCall(kind)
        # A PEER hook is handed the pending peer events to read; they stay pending (the hook
        # drains nothing), so the resume turn still sees them (engines/eddie_peers.py).
        peers = [m for m in after.get("pending") or [] if m.get("kind") == "PEER_EVENT"]
        ref = self._ref(
            after,
            turn_id,
            1,
            worker_id,
            call,
            peers if call is LifecycleCall.PEER else [],
            int(after.get("chat_count", 0)),
            lease_until,
        )
        ref.process["status"] = after["status"]  # a hook leaves the status as it is
        return ref

    async def end_hook(self, ref: TurnRef) -> dict[str, Any] | None:
        """Releases a hook's lane (its commit or its failure); no status change, no event."""
        ref.done = True
        return await self.store.update(
            ref.process_id,
            {"lane.turn_id": ref.turn_id},
            {
                "$set": {"chat_count": max(ref.highest_chat, ref.chat_base)},
                "$unset": {"lane": ""},
            },
        )

    async def take(self, process_id: str, worker_id: str) -> TurnRef | None:
        """Takes the lane of a process that wants a turn; None when there is nothing to do."""
        now = self.clock.now_ms()
        lease_until = now + self.config.lease_ms
        turn_id = new_id("turn")
        before = await self.store.update(
            process_id,
            {
                **_LANE_FREE,
                "wake": True,
                "status": {"$in": [ProcessStatus.INIT.value, *[s.value for s in WAKING]]},
            },
            {
                "$rename": {"pending": "owned", "pending_keys": "owned_keys"},
                "$set": _new_lane(turn_id, worker_id, lease_until, now),
            },
            after=False,
        )
        if before is None:
            return await self._retake(process_id, worker_id, now)
        self._seen(before)
        call = _call_for(before)
        # chat_count only changes when this lane commits, so it is the base for the turn's
        # chat message numbers on every attempt.
        chat_base = int(before.get("chat_count", 0))
        ref = self._ref(
            before,
            turn_id,
            1,
            worker_id,
            call,
            list(before.get("pending") or []),
            chat_base,
            lease_until,
        )
        await self._status_event(before, ProcessStatus(before["status"]), ProcessStatus.RUNNING)
        return ref

    async def take_steered(
        self, process_id: str, session_id: str, msg: dict[str, Any], key: str, worker_id: str
    ) -> TurnRef | None:
        """Delivers a steered message and takes the lane for it in one write, when the process
        waits for exactly that: started, idle or blocked, no lane, nothing else pending, and no
        message with this key. None otherwise (the caller pushes it to the inbox as usual).
        The status event is the caller's to publish (`status_event`), after its reply."""
        now = self.clock.now_ms()
        lease_until = now + self.config.lease_ms
        turn_id = new_id("turn")
        cond: dict[str, Any] = {
            **_LANE_FREE,
            "started": True,
            "status": {"$in": [s.value for s in WAKING]},
            "pending": {"$exists": False},
            "pending_keys": {"$ne": key},
            "owned_keys": {"$ne": key},
            "drained_keys": {"$ne": key},
        }
        if session_id:
            cond["session_id"] = session_id
        before = await self.store.update(
            process_id,
            cond,
            {
                "$push": {"owned": msg, "owned_keys": key},
                "$set": _new_lane(turn_id, worker_id, lease_until, now),
            },
            after=False,
        )
        if before is None:
            return None
        self._seen(before)
        return self._ref(
            before,
            turn_id,
            1,
            worker_id,
            _call_for(before),
            [msg],
            int(before.get("chat_count", 0)),
            lease_until,
        )

    async def _retake(self, process_id: str, worker_id: str, now: int) -> TurnRef | None:
        """Redoes a turn whose worker was lost or whose lease expired."""
        doc = await self.store.get(process_id)
        if doc is not None and (doc.get("hook") or (doc.get("lane") or {}).get("hook")):
            return await self._take_hook(doc, worker_id, now)
        if doc is None or not doc.get("lane") or doc.get("status") != ProcessStatus.RUNNING.value:
            return None
        lane = doc["lane"]
        if int(lane.get("lease_until_ms", 0)) >= now:
            return None
        attempt = int(lane.get("attempt", 1)) + 1
        if attempt > self.config.max_attempts:
            await self.close_failed(doc, lane.get("last_error") or "worker lost or lease expired")
            return None
        lease_until = now + self.config.lease_ms
        updated = await self.store.update(
            process_id,
            {"lane.turn_id": lane["turn_id"], "lane.attempt": lane.get("attempt", 1)},
            {
                "$set": {
                    "lane.attempt": attempt,
                    "lane.worker_id": worker_id,
                    "lane.lease_until_ms": lease_until,
                    "updated_at_ms": now,
                }
            },
        )
        if updated is None:
            return None
        logger.info("redoing turn %s of %s (attempt %d)", lane["turn_id"], process_id, attempt)
        # The client sees the redo start like any turn.
        await self._status_event(updated, ProcessStatus.RUNNING, ProcessStatus.RUNNING)
        return self._ref(
            updated,
            str(lane["turn_id"]),
            attempt,
            worker_id,
            _call_for(updated),
            list(updated.get("owned") or []),
            int(updated.get("chat_count", 0)),
            lease_until,
            prev_status=ProcessStatus.IDLE,
        )

    def _seen(self, doc: dict[str, Any]) -> None:
        if doc.get("outbox"):
            self._signals.outbox_seen(doc)

    def _ref(
        self,
        doc: dict[str, Any],
        turn_id: str,
        attempt: int,
        worker_id: str,
        call: LifecycleCall,
        owned: list[dict[str, Any]],
        chat_base: int,
        lease_until: int,
        prev_status: ProcessStatus | None = None,
    ) -> TurnRef:
        process = {**doc, "status": ProcessStatus.RUNNING.value}
        process.pop("pending", None)
        process.pop("owned", None)
        process.pop("outbox", None)
        return TurnRef(
            process=process,
            turn_id=turn_id,
            attempt=attempt,
            process_id=str(doc["_id"]),
            session_id=str(doc["session_id"]),
            process_name=str(doc["name"]),
            engine=str(doc["engine"]),
            parent_process_id=str(doc.get("parent_process_id") or ""),
            worker_id=worker_id,
            call=call,
            prev_status=prev_status or ProcessStatus(doc["status"]),
            chat_base=chat_base,
            owned=owned,
            lease_until_ms=lease_until,
            highest_chat=chat_base,
        )

    async def renew(self, refs: list[TurnRef]) -> list[TurnRef]:
        """Extends the leases of running turns in one store write; returns the turns whose lane
        is no longer theirs (stopped, or taken by a redo after their lease ran out)."""
        if not refs:
            return []
        until = self.clock.now_ms() + self.config.lease_ms
        renewed = await self.store.renew_leases(
            [(r.process_id, r.turn_id, r.attempt) for r in refs], until
        )
        lost = []
        for ref in refs:
            if ref.turn_id in renewed:
                ref.lease_until_ms = until
            else:
                lost.append(ref)
        return lost

    async def commit(
        self,
        ref: TurnRef,
        status: ProcessStatus,
        close_reason: CloseReason | None,
        close_detail: str = "",
        outbox: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any] | None:
        """Ends a turn: owned messages become drained, the lane is released, the status set,
        and `outbox` entries (process_service/outbox.py) written in the same compare-and-set.
        Returns the document after the commit, or None when the lane is no longer ours."""
        now = self.clock.now_ms()
        # The drained record serves the duplicate check of client-chosen keys and keeps what
        # no chat message holds (events, results, commands). A plain user message without a key
        # can never come again and its text is in the chat: recording it too costs a write
        # per turn for nothing.
        await self.store.archive(
            ref.process_id,
            [m for m in ref.owned if m.get("keyed") or m.get("kind") != "USER_CHAT_INPUT"],
            {"drained_at_ms": now, "drained_by_turn": ref.turn_id},
        )
        base_set: dict[str, Any] = {
            "updated_at_ms": now,
            "chat_count": max(ref.highest_chat, ref.chat_base),
            "started": True,
            # The client-chosen keys this turn drained stay on the document until the next
            # commit: a steer with the same key that checked the archive just before it was
            # written (above) and pushes just after the lane is released is still refused
            # (ProcessStore.push_pending), so a concurrent resend is never handled twice.
            "drained_keys": [m["idempotency_key"] for m in ref.owned if m.get("keyed")],
            **ref.commit_fields,
        }
        if (
            ref.call is LifecycleCall.START
            and ref.engine_version
            and not ref.process.get("engine_version")
        ):
            # The process runs the engine version of the worker that started it.
            base_set["engine_version"] = ref.engine_version
        cond = {"lane.turn_id": ref.turn_id, "lane.attempt": ref.attempt}
        final = status
        if status is ProcessStatus.CLOSED:
            base_set.update(
                close_reason=(close_reason or CloseReason.DONE).value,
                close_detail=close_detail,
                wake=False,
            )
            doc = await self.store.update(
                ref.process_id,
                cond,
                {
                    "$set": {**base_set, **entry_fields(outbox or []), "status": final.value},
                    "$unset": _CLEAR_TURN,
                },
            )
        else:
            doc = await self.store.update(
                ref.process_id,
                {**cond, "pause_requested": {"$ne": True}},
                {
                    "$set": {**base_set, **entry_fields(outbox or []), "status": final.value},
                    "$unset": _CLEAR_TURN,
                },
            )
            if doc is None:
                final = ProcessStatus.PAUSED
                doc = await self.store.update(
                    ref.process_id,
                    cond,
                    {
                        "$set": {
                            **base_set,
                            **entry_fields(_paused(outbox or [])),
                            "status": final.value,
                        },
                        "$unset": _CLEAR_TURN,
                    },
                )
        ref.done = True
        if doc is None:
            logger.info("commit of stale turn %s for %s refused", ref.turn_id, ref.process_id)
            return None
        await self._status_event(doc, ProcessStatus.RUNNING, final)
        return doc

    async def fail(self, ref: TurnRef, error: str, *, backoff: bool) -> dict[str, Any] | None:
        """Gives the turn back: it is redone (by any worker) after an optional backoff, up to
        max_attempts; then the process closes STALE with the error as its detail."""
        if ref.call in HOOK_CALLS:
            logger.warning("hook %s of %s failed: %s", ref.call.value, ref.process_id, error)
            await self.end_hook(ref)
            return None
        now = self.clock.now_ms()
        ref.done = True
        if ref.attempt >= self.config.max_attempts:
            doc = await self.store.get(ref.process_id)
            if doc is None or (doc.get("lane") or {}).get("turn_id") != ref.turn_id:
                return None
            return await self.close_failed(doc, error)
        delay = self.config.retry_backoff_ms * ref.attempt if backoff else 0
        return await self.store.update(
            ref.process_id,
            {"lane.turn_id": ref.turn_id, "lane.attempt": ref.attempt},
            {
                "$set": {
                    "lane.lease_until_ms": now + delay - 1,
                    "lane.worker_id": "",
                    "lane.last_error": error[:2000],
                }
            },
        )

    async def close_failed(self, doc: dict[str, Any], error: str) -> dict[str, Any] | None:
        """Closes the process STALE; its parent is told like of a commit of that turn (the
        entry is written with the close)."""
        lane = doc.get("lane") or {}
        attempts = int(lane.get("attempt", 1))
        owed = [close_entry(CloseReason.STALE, str(lane.get("turn_id") or ""))]
        closed = await self.store.update(
            str(doc["_id"]),
            {"lane.turn_id": lane.get("turn_id")},
            {
                "$set": {
                    "status": ProcessStatus.CLOSED.value,
                    "close_reason": CloseReason.STALE.value,
                    "close_detail": f"turn failed {attempts} times: {error}"[:2000],
                    "wake": False,
                    "updated_at_ms": self.clock.now_ms(),
                    **entry_fields(owed if doc.get("parent_process_id") else []),
                },
                "$unset": _CLEAR_TURN,
            },
        )
        if closed is not None:
            logger.warning("process %s closed after %d failed attempts", doc["_id"], attempts)
            await self._status_event(closed, ProcessStatus.RUNNING, ProcessStatus.CLOSED)
            await self._signals.outbox_written(closed)
        return closed

    async def _status_event(
        self, doc: dict[str, Any], old: ProcessStatus, new: ProcessStatus
    ) -> None:
        self.queue_status_event(doc, old, new)
        await self.events.flush(str(doc["session_id"]))

    def queue_status_event(
        self, doc: dict[str, Any], old: ProcessStatus, new: ProcessStatus
    ) -> asyncio.Future[int]:
        """Queues a status event in the session's seq order without writing it (the caller
        flushes the session's events)."""
        self._signals.status_changed(str(doc["session_id"]))
        if new is not ProcessStatus.INIT:
            waiter = self._past_init.get(str(doc["_id"]))
            if waiter is not None:
                waiter.set()
        return self.events.submit(
            str(doc["session_id"]),
            STATUS_CHANGED,
            {
                "think_process_id": str(doc["_id"]),
                "process_name": doc.get("name", ""),
                "engine": doc.get("engine", ""),
                "from_status": old.value,
                "to_status": new.value,
                "close_reason": doc.get("close_reason") or "",
                "parent_process_id": doc.get("parent_process_id") or "",
            },
        )

    status_event = _status_event

    def past_init(self, process_id: str) -> asyncio.Event:
        """An event set when a status change of this replica moves the process out of INIT;
        the caller drops it with `forget_past_init`."""
        return self._past_init.setdefault(process_id, asyncio.Event())

    def forget_past_init(self, process_id: str) -> None:
        self._past_init.pop(process_id, None)


def _paused(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of a commit that became PAUSED (a pause asked meanwhile): no BLOCKED goes
    to the parent, observers hear the PAUSED status."""
    return [
        {**e, "status": ProcessStatus.PAUSED.value} if e.get("kind") == OBSERVE else e
        for e in entries
        if e.get("kind") != PARENT
    ]


def _new_lane(turn_id: str, worker_id: str, lease_until: int, now: int) -> dict[str, Any]:
    """The fields a first attempt's lane take sets."""
    return {
        "lane": {
            "turn_id": turn_id,
            "attempt": 1,
            "worker_id": worker_id,
            "lease_until_ms": lease_until,
        },
        "status": ProcessStatus.RUNNING.value,
        "wake": False,
        "updated_at_ms": now,
    }


def _call_for(doc: dict[str, Any]) -> LifecycleCall:
    if doc.get("status") == ProcessStatus.INIT.value or not doc.get("started"):
        return LifecycleCall.START
    if doc.get("call") == LifecycleCall.RESUME.value:
        return LifecycleCall.RESUME
    return LifecycleCall.STEER
