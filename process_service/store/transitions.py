"""The compare-and-set transitions of a process document: lane takes and commits (lanes.py),
pause, resume and stop (processes.py), the session cascades (cascade.py). Part of the store:
ProcessStore (store.py) inherits them, and only these two modules and store_docs.py know the
document's field names and update operators.

Each transition is one atomic `find_one_and_update` by `_id` (the embedded store only uses the
_id index, docs/architecture.md "Store access") and returns the process after it (or before,
where the caller needs what it replaced), or None when the condition no longer held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection

from process_service.process_model import InboxMessage, Lane, OutboxEntry, Process
from process_service.store.documents import entry_doc, lane_doc, process_from_doc
from vance.domain import WAKING, CloseReason, LifecycleCall, ProcessStatus

# Document: the filters and updates of the store's commands, built here and nowhere else.
from vance.store import Document
from vance.store_wire import HotCollection

_WAKING = [s.value for s in WAKING]
_LANE_FREE: Document = {"lane": None}
# What a finished turn leaves behind (its lane, its messages, a pause it was asked for).
_CLEAR_TURN = {"lane": "", "owned": "", "owned_keys": "", "pause_requested": "", "call": ""}
# What a session's close drops: the turn and every message not yet handled.
_CLEAR_ALL = {**_CLEAR_TURN, "pending": "", "pending_keys": ""}


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """What a turn's commit writes (Lanes.commit)."""

    status: ProcessStatus
    close_reason: CloseReason | None
    close_detail: str
    chat_count: int
    # The client-chosen keys the turn drained (ProcessStore.push_pending refuses them).
    drained_keys: list[str]
    now_ms: int
    # Set on a start turn: the engine version the process runs from now on.
    engine_version: str = ""
    # The engine's rolling chat history summary and the last chat number it covers.
    history_summary: tuple[str, int] | None = None


def outbox_fields(entries: Sequence[OutboxEntry]) -> Document:
    """The `$set` fields that add entries (process_service/runtime/outbox.py) to the outbox."""
    return {f"outbox.{e.id}": entry_doc(e) for e in entries}


class ProcessTransitions:
    _hot_processes: HotCollection
    processes: AsyncCollection[Document]

    async def _cas(
        self, process_id: str, cond: Document, update: Document, *, after: bool = True
    ) -> Process | None:
        doc = await self._hot_processes.find_one_and_update(
            {"_id": process_id, **cond},
            update,
            return_document=ReturnDocument.AFTER if after else ReturnDocument.BEFORE,
        )
        return None if doc is None else process_from_doc(doc)

    # ---- lanes (process_service/runtime/lanes.py) ----

    async def take_lane(self, process_id: str, lane: Lane, now_ms: int) -> Process | None:
        """A first attempt: moves `pending` to `owned` and holds the lane, when a turn is
        wanted and no lane is held. Returns the process before."""
        return await self._cas(
            process_id,
            {
                **_LANE_FREE,
                "wake": True,
                "status": {"$in": [ProcessStatus.INIT.value, *_WAKING]},
            },
            {
                "$rename": {"pending": "owned", "pending_keys": "owned_keys"},
                "$set": _running(lane, now_ms),
            },
            after=False,
        )

    async def take_steered(
        self, process_id: str, session_id: str, msg: InboxMessage, lane: Lane, now_ms: int
    ) -> Process | None:
        """Delivers `msg` as the owned message of a new lane, when the process waits for just
        that (Lanes.take_steered). Returns the process before."""
        key = msg.key
        cond: Document = {
            **_LANE_FREE,
            "started": True,
            "status": {"$in": _WAKING},
            "pending": {"$exists": False},
            "pending_keys": {"$ne": key},
            "owned_keys": {"$ne": key},
            "drained_keys": {"$ne": key},
        }
        if session_id:
            cond["session_id"] = session_id
        return await self._cas(
            process_id,
            cond,
            {"$push": {"owned": msg.body, "owned_keys": key}, "$set": _running(lane, now_ms)},
            after=False,
        )

    async def take_hook_lane(self, process_id: str, lane: Lane) -> Process | None:
        """Holds the lane for the hook task asked for (the status stays)."""
        assert lane.hook is not None
        return await self._cas(
            process_id,
            {**_LANE_FREE, "hook": lane.hook.value},
            {"$set": {"lane": lane_doc(lane)}, "$unset": {"hook": ""}},
        )

    async def drop_lane(self, process_id: str, turn_id: str) -> None:
        await self._cas(process_id, {"lane.turn_id": turn_id}, {"$unset": {"lane": ""}})

    async def end_hook(self, process_id: str, turn_id: str, chat_count: int) -> Process | None:
        return await self._cas(
            process_id,
            {"lane.turn_id": turn_id},
            {"$set": {"chat_count": chat_count}, "$unset": {"lane": ""}},
        )

    async def retake(self, process_id: str, old: Lane, new: Lane, now_ms: int) -> Process | None:
        """The next attempt of a turn whose worker was lost or whose lease ran out."""
        return await self._cas(
            process_id,
            {"lane.turn_id": old.turn_id, "lane.attempt": old.attempt},
            {
                "$set": {
                    "lane.attempt": new.attempt,
                    "lane.worker_id": new.worker_id,
                    "lane.lease_until_ms": new.lease_until_ms,
                    "updated_at_ms": now_ms,
                }
            },
        )

    async def commit_turn(
        self,
        process_id: str,
        lane: tuple[str, int],
        end: TurnEnd,
        outbox: Sequence[OutboxEntry],
        *,
        unless_pause_requested: bool,
    ) -> Process | None:
        """Ends the turn holding `lane` (turn id, attempt): owned messages drained, the lane
        released, the status set, outbox entries written, all in one compare-and-set."""
        fields: Document = {
            "updated_at_ms": end.now_ms,
            "chat_count": end.chat_count,
            "started": True,
            "status": end.status.value,
            **outbox_fields(outbox),
        }
        # No keys drained (a plain chat turn): the field goes rather than staying as an empty
        # list in a document every turn rewrites twice (`drained_keys: {$ne: key}` matches a
        # missing field).
        clear = _CLEAR_TURN
        if end.drained_keys:
            fields["drained_keys"] = end.drained_keys
        else:
            clear = {**_CLEAR_TURN, "drained_keys": ""}
        if end.history_summary is not None:
            fields["chat_history_summary"] = end.history_summary[0]
            fields["chat_history_summary_through"] = end.history_summary[1]
        if end.engine_version:
            fields["engine_version"] = end.engine_version
        if end.status is ProcessStatus.CLOSED:
            fields.update(
                close_reason=(end.close_reason or CloseReason.DONE).value,
                close_detail=end.close_detail,
                wake=False,
            )
        cond: Document = {"lane.turn_id": lane[0], "lane.attempt": lane[1]}
        if unless_pause_requested:
            cond["pause_requested"] = {"$ne": True}
        return await self._cas(process_id, cond, {"$set": fields, "$unset": clear})

    async def release_for_retry(
        self, process_id: str, lane: tuple[str, int], lease_until_ms: int, error: str
    ) -> Process | None:
        """Gives a failed turn's lane back: any worker redoes it once the lease has passed."""
        return await self._cas(
            process_id,
            {"lane.turn_id": lane[0], "lane.attempt": lane[1]},
            {
                "$set": {
                    "lane.lease_until_ms": lease_until_ms,
                    "lane.worker_id": "",
                    "lane.last_error": error[:2000],
                }
            },
        )

    async def close_stale(
        self, process_id: str, turn_id: str, detail: str, now_ms: int, outbox: Sequence[OutboxEntry]
    ) -> Process | None:
        return await self._cas(
            process_id,
            {"lane.turn_id": turn_id},
            {
                "$set": {
                    "status": ProcessStatus.CLOSED.value,
                    "close_reason": CloseReason.STALE.value,
                    "close_detail": detail[:2000],
                    "wake": False,
                    "updated_at_ms": now_ms,
                    **outbox_fields(outbox),
                },
                "$unset": _CLEAR_TURN,
            },
        )

    # ---- user operations (process_service/lifecycle/processes.py) ----

    async def pause_waiting(self, process_id: str, now_ms: int) -> Process | None:
        """PAUSED, when no turn runs (IDLE, BLOCKED or INIT)."""
        statuses = [*_WAKING, ProcessStatus.INIT.value]
        return await self._cas(
            process_id,
            {**_LANE_FREE, "status": {"$in": statuses}},
            {"$set": {"status": ProcessStatus.PAUSED.value, "updated_at_ms": now_ms}},
        )

    async def request_pause(self, process_id: str) -> Process | None:
        """A running turn's commit leaves the process PAUSED (TurnEnd, unless_pause_requested)."""
        return await self._cas(
            process_id,
            {"status": ProcessStatus.RUNNING.value},
            {"$set": {"pause_requested": True}},
        )

    async def cancel_pause_request(self, process_id: str) -> Process | None:
        return await self._cas(process_id, {}, {"$unset": {"pause_requested": ""}})

    async def resume(
        self, process_id: str, was: ProcessStatus, to: ProcessStatus, *, wake: bool, now_ms: int
    ) -> Process | None:
        """Out of PAUSED or SUSPENDED; the next turn is a RESUME call."""
        return await self._cas(
            process_id,
            {"status": was.value},
            {
                "$set": {
                    "status": to.value,
                    "wake": wake,
                    "call": LifecycleCall.RESUME.value,
                    "updated_at_ms": now_ms,
                },
                # A suspend hook no worker took yet no longer applies.
                "$unset": {"hook": ""},
            },
        )

    async def stop(
        self,
        process_id: str,
        *,
        stopped_by: str,
        hook: LifecycleCall | None,
        now_ms: int,
        outbox: Sequence[OutboxEntry],
    ) -> Process | None:
        """CLOSED STOPPED, whatever runs; returns the process before."""
        return await self._cas(
            process_id,
            {"status": {"$ne": ProcessStatus.CLOSED.value}},
            {
                "$set": {
                    "status": ProcessStatus.CLOSED.value,
                    "close_reason": CloseReason.STOPPED.value,
                    "stopped_by": stopped_by,
                    "wake": False,
                    "updated_at_ms": now_ms,
                    **_hook_field(hook),
                    **outbox_fields(outbox),
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

    async def count_persistent_call(self, process_id: str) -> None:
        await self._cas(process_id, {}, {"$inc": {"persistent_tool_calls": 1}}, after=False)

    async def ask_hook(
        self, process_id: str, status: ProcessStatus, hook: LifecycleCall
    ) -> Process | None:
        """Asks for a hook task of a process in `status` that has none asked for yet."""
        return await self._cas(
            process_id,
            {"status": status.value, "hook": {"$exists": False}},
            {"$set": _hook_field(hook)},
        )

    # ---- session cascades (process_service/lifecycle/session_teardown.py) ----

    async def suspend_waiting(
        self,
        process: Process,
        *,
        cause: str,
        hook: LifecycleCall | None,
        now_ms: int,
    ) -> Process | None:
        """SUSPENDED, when no lane is held and the status is still the one read."""
        return await self._cas(
            process.id,
            {**_LANE_FREE, "status": process.status.value},
            {"$set": _suspended(cause, hook, now_ms)},
        )

    async def suspend_running(
        self,
        process: Process,
        *,
        cause: str,
        hook: LifecycleCall | None,
        now_ms: int,
    ) -> Process | None:
        """SUSPENDED, cutting off the running turn: what it owned goes back in front of
        pending, so the resume turn sees every message once (the cancelled turn's commit is
        refused: its lane is gone). Only while pending is as read."""
        assert process.lane is not None
        keys = process.pending_keys
        cond: Document = {
            "lane.turn_id": process.lane.turn_id,
            "pending_keys": list(keys) if keys is not None else {"$exists": False},
        }
        fields = _suspended(cause, hook, now_ms)
        fields.update(
            pending=[m.body for m in (*process.owned, *process.pending)],
            pending_keys=[*process.owned_keys, *(keys or ())],
            wake=bool(process.owned_keys or keys),
        )
        return await self._cas(
            process.id,
            cond,
            {"$set": fields, "$unset": {"lane": "", "owned": "", "owned_keys": "", "call": ""}},
        )

    async def clear_suspended_at(self, process_id: str) -> None:
        await self._cas(process_id, {}, {"$unset": {"suspended_at_ms": ""}}, after=False)

    async def close_for_session(
        self,
        process_id: str,
        reason: CloseReason,
        *,
        hook: LifecycleCall | None,
        now_ms: int,
    ) -> Process | None:
        """CLOSED with the session's reason; pending messages dropped. Returns it before."""
        return await self._cas(
            process_id,
            {"status": {"$ne": ProcessStatus.CLOSED.value}},
            {
                "$set": {
                    "status": ProcessStatus.CLOSED.value,
                    "close_reason": reason.value,
                    "wake": False,
                    "updated_at_ms": now_ms,
                    **_hook_field(hook),
                },
                "$unset": {**_CLEAR_ALL, **({} if hook else {"hook": ""})},
            },
            after=False,
        )

    async def seed_chat(self, process_id: str, copied: int, history_from: str) -> Process | None:
        """A respawned chat process's copied history, once, before it starts."""
        return await self._cas(
            process_id,
            {"status": ProcessStatus.INIT.value, "seeded_from": {"$exists": False}},
            {"$set": {"chat_count": copied, "wake": True, "seeded_from": history_from}},
        )

    async def set_connection_profile(self, session_id: str, profile: str) -> int:
        """The profile of the connection bound to the session, on each of its processes (a
        filter by session: a scan, once per bind that changes it). Returns how many changed."""
        result = await self.processes.update_many(
            {"session_id": session_id}, {"$set": {"connection_profile": profile}}
        )
        return int(result.modified_count)

    # ---- outbox (process_service/runtime/outbox.py) ----

    async def clear_outbox(self, process_id: str, entry_ids: list[str]) -> None:
        await self._cas(process_id, {}, {"$unset": {f"outbox.{e}": "" for e in entry_ids}})

    async def with_outbox(self) -> list[Process]:
        """Every process whose outbox holds entries (a scan: at start and rarely after)."""
        projection = {"pending": 0, "owned": 0, "drained_keys": 0, "recipe_snapshot": 0}
        docs = await self.processes.find(
            {"outbox": {"$exists": True, "$ne": {}}}, projection
        ).to_list(None)
        return [process_from_doc(d) for d in docs]

    # ---- observers (process_service/lifecycle/observations.py) ----

    async def mark_observed(self, process_ids: list[str]) -> None:
        for i in range(0, len(process_ids), 500):
            await self.processes.update_many(
                {"_id": {"$in": process_ids[i : i + 500]}, "observed": {"$ne": True}},
                {"$set": {"observed": True}},
            )


def _running(lane: Lane, now_ms: int) -> Document:
    """The fields a first attempt's lane take sets."""
    return {
        "lane": lane_doc(lane),
        "status": ProcessStatus.RUNNING.value,
        "wake": False,
        "updated_at_ms": now_ms,
    }


def _hook_field(hook: LifecycleCall | None) -> Document:
    return {"hook": hook.value} if hook is not None else {}


def _suspended(cause: str, hook: LifecycleCall | None, now_ms: int) -> Document:
    return {
        "status": ProcessStatus.SUSPENDED.value,
        "last_suspend_cause": cause,
        "suspended_at_ms": now_ms,
        "updated_at_ms": now_ms,
        **_hook_field(hook),
    }
