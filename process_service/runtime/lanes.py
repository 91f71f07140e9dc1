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
from dataclasses import replace

from process_service.events.log import CHAT_APPENDED, STATUS_CHANGED, EventLog, chat_event_data
from process_service.models import TurnRef
from process_service.process_model import (
    InboxMessage,
    Lane,
    MessageKind,
    ObserveEntry,
    OutboxEntry,
    ParentEntry,
    Process,
)
from process_service.runtime.failed_turn import failure_detail, write_failed_chat
from process_service.runtime.lane_signals import LaneSignals
from process_service.runtime.parent_notify import close_entry
from process_service.store.process_store import ProcessStore
from process_service.store.transitions import TurnEnd
from vance.clock import Clock
from vance.config import LanesConfig
from vance.domain import (
    HOOK_CALLS,
    CloseReason,
    LifecycleCall,
    ProcessStatus,
)
from vance.ids import new_id
from vance.redact import clean_detail

logger = logging.getLogger(__name__)


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
        # Processes someone waits to see leave INIT (process_create, process_service/tools/process_tools.py).
        self._past_init: dict[str, asyncio.Event] = {}
        # engine -> the hooks (SUSPEND, STOP) its workers declared in their hello.
        self._hooks: dict[str, set[LifecycleCall]] = {}

    # ---- hooks ----

    def declare_hooks(self, hooks: dict[str, list[str]]) -> None:
        for engine, names in hooks.items():
            self._hooks.setdefault(engine, set()).update(LifecycleCall(n) for n in names)

    def hook_for(self, process: Process, call: LifecycleCall) -> LifecycleCall | None:
        """The hook task to ask for with the transition itself: only for a process that has
        started (its engine ran start) and whose engine declared the hook. A hook runs at most
        once: a failure or a lost worker drops it (logged)."""
        if process.started and call in self._hooks.get(process.engine, ()):
            return call
        return None

    async def _take_hook(self, process: Process, worker_id: str, now: int) -> TurnRef | None:
        """Takes the lane for a hook task (the status stays), or drops a hook lane whose worker
        was lost."""
        lane = process.lane
        if lane is not None:
            if lane.hook is not None and lane.lease_until_ms < now:
                await self.store.drop_lane(process.id, lane.turn_id)
                logger.warning("hook %s of %s lost with its worker; dropped", lane.hook, process.id)
            return None
        assert process.hook is not None
        call = process.hook
        new = Lane(new_id("turn"), 1, worker_id, now + self.config.lease_ms, hook=call)
        after = await self.store.take_hook_lane(process.id, new)
        if after is None:
            return None
        # A PEER hook is handed the pending peer events to read; they stay pending (the hook
        # drains nothing), so the resume turn still sees them (engines/eddie_peers.py).
        peers = [m for m in after.pending if m.kind is MessageKind.PEER_EVENT]
        return self._ref(
            after, new, call, peers if call is LifecycleCall.PEER else [], after.chat_count
        )

    async def end_hook(self, ref: TurnRef) -> Process | None:
        """Releases a hook's lane (its commit or its failure); no status change, no event."""
        ref.done = True
        return await self.store.end_hook(
            ref.process_id, ref.turn_id, max(ref.highest_chat, ref.chat_base)
        )

    async def take(self, process_id: str, worker_id: str) -> TurnRef | None:
        """Takes the lane of a process that wants a turn; None when there is nothing to do."""
        now = self.clock.now_ms()
        lane = Lane(new_id("turn"), 1, worker_id, now + self.config.lease_ms)
        before = await self.store.take_lane(process_id, lane, now)
        if before is None:
            return await self._retake(process_id, worker_id, now)
        self._seen(before)
        # chat_count only changes when this lane commits, so it is the base for the turn's
        # chat message numbers on every attempt.
        ref = self._ref(before, lane, _call_for(before), list(before.pending), before.chat_count)
        await self.running_event(before, before.status)
        return ref

    async def take_steered(
        self, process_id: str, session_id: str, msg: InboxMessage, worker_id: str
    ) -> TurnRef | None:
        """Delivers a steered message and takes the lane for it in one write, when the process
        waits for exactly that: started, idle or blocked, no lane, nothing else pending, and no
        message with this key. None otherwise (the caller pushes it to the inbox as usual).
        The status event is the caller's to publish (`running_event`), after its reply."""
        now = self.clock.now_ms()
        lane = Lane(new_id("turn"), 1, worker_id, now + self.config.lease_ms)
        before = await self.store.take_steered(process_id, session_id, msg, lane, now)
        if before is None:
            return None
        self._seen(before)
        return self._ref(before, lane, _call_for(before), [msg], before.chat_count)

    async def _retake(self, process_id: str, worker_id: str, now: int) -> TurnRef | None:
        """Redoes a turn whose worker was lost or whose lease expired."""
        process = await self.store.get(process_id)
        if process is None:
            return None
        if process.hook is not None or (process.lane is not None and process.lane.hook):
            return await self._take_hook(process, worker_id, now)
        lane = process.lane
        if lane is None or process.status is not ProcessStatus.RUNNING:
            return None
        if lane.lease_until_ms >= now:
            return None
        if lane.attempt + 1 > self.config.max_attempts:
            ended = await self.give_up(process, lane.last_error or "worker lost or lease expired")
            if ended is not None and not ended.closed:
                # A chat's turn ended (end_failed): messages that came meanwhile go on now.
                return await self.take(process_id, worker_id)
            return None
        new = replace(
            lane,
            attempt=lane.attempt + 1,
            worker_id=worker_id,
            lease_until_ms=now + self.config.lease_ms,
        )
        updated = await self.store.retake(process_id, lane, new, now)
        if updated is None:
            return None
        logger.info("redoing turn %s of %s (attempt %d)", lane.turn_id, process_id, new.attempt)
        # The client sees the redo start like any turn.
        await self._status_event(updated, ProcessStatus.RUNNING, ProcessStatus.RUNNING)
        return self._ref(
            updated,
            new,
            _call_for(updated),
            list(updated.owned),
            updated.chat_count,
            prev_status=ProcessStatus.IDLE,
        )

    def _seen(self, process: Process) -> None:
        if process.outbox:
            self._signals.outbox_seen(process)

    def _ref(
        self,
        process: Process,
        lane: Lane,
        call: LifecycleCall,
        owned: list[InboxMessage],
        chat_base: int,
        prev_status: ProcessStatus | None = None,
    ) -> TurnRef:
        return TurnRef(
            process=process,
            turn_id=lane.turn_id,
            attempt=lane.attempt,
            process_id=process.id,
            session_id=process.session_id,
            process_name=process.name,
            engine=process.engine,
            parent_process_id=process.parent_process_id,
            worker_id=lane.worker_id,
            call=call,
            prev_status=prev_status or process.status,
            chat_base=chat_base,
            owned=owned,
            lease_until_ms=lane.lease_until_ms,
            highest_chat=chat_base,
        )

    async def renew(self, refs: list[TurnRef]) -> list[TurnRef]:
        """Extends, in one store write, the leases of the running turns that need it before the
        worker's next heartbeat (`renewal_due`); returns the turns whose lane is no longer
        theirs (stopped, or taken by a redo after their lease ran out)."""
        now = self.clock.now_ms()
        refs = [r for r in refs if renewal_due(self.config, r.lease_until_ms, now)]
        if not refs:
            return []
        until = now + self.config.lease_ms
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
        outbox: list[OutboxEntry] | None = None,
        *,
        failure: str = "",
    ) -> Process | None:
        """Ends a turn: owned messages become drained, the lane is released, the status set,
        and `outbox` entries (process_service/runtime/outbox.py) written in the same compare-and-set. Returns the process after the commit, or None when the lane is no
        longer ours. `failure`: why a turn that failed for good ended (end_failed), told with
        its status event."""
        now = self.clock.now_ms()
        # The drained record serves the duplicate check of client-chosen keys and keeps what
        # no chat message holds (events, results, commands). A plain user message without a key
        # can never come again and its text is in the chat: recording it too costs a write
        # per turn for nothing.
        await self.store.archive(
            ref.process_id,
            [m for m in ref.owned if m.keyed or m.kind is not MessageKind.USER_CHAT_INPUT],
            turn_id=ref.turn_id,
            now_ms=now,
        )
        end = TurnEnd(
            status=status,
            close_reason=close_reason,
            close_detail=_shown_detail(close_reason, close_detail),
            chat_count=max(ref.highest_chat, ref.chat_base),
            # The client-chosen keys this turn drained stay on the document until the next
            # commit: a steer with the same key that checked the archive just before it was
            # written (above) and pushes just after the lane is released is still refused
            # (ProcessStore.push_pending), so a concurrent resend is never handled twice.
            drained_keys=[m.key for m in ref.owned if m.keyed],
            now_ms=now,
            # The process runs the engine version of the worker that started it.
            engine_version=ref.engine_version
            if ref.call is LifecycleCall.START and not ref.process.engine_version
            else "",
            history_summary=ref.history_summary,
        )
        lane = (ref.turn_id, ref.attempt)
        entries = outbox or []
        pausable = status is not ProcessStatus.CLOSED
        process = await self.store.commit_turn(
            ref.process_id, lane, end, entries, unless_pause_requested=pausable
        )
        if process is None and pausable:
            # A pause was asked for meanwhile: the turn ends PAUSED.
            end = replace(end, status=ProcessStatus.PAUSED)
            process = await self.store.commit_turn(
                ref.process_id, lane, end, _paused(entries), unless_pause_requested=False
            )
        ref.done = True
        if process is None:
            logger.info("commit of stale turn %s for %s refused", ref.turn_id, ref.process_id)
            return None
        await self._status_event(process, ProcessStatus.RUNNING, end.status, failure=failure)
        return process

    async def fail(
        self, ref: TurnRef, error: str, *, backoff: bool, retry: bool = True
    ) -> Process | None:
        """Gives the turn back: it is redone (by any worker) after an optional backoff, up to
        max_attempts; then the turn fails for good (`give_up`). `retry` False: a failure
        every attempt would meet again (the turn cannot be sent to a worker), so it fails for
        good at once."""
        if ref.call in HOOK_CALLS:
            logger.warning("hook %s of %s failed: %s", ref.call.value, ref.process_id, error)
            await self.end_hook(ref)
            return None
        now = self.clock.now_ms()
        ref.done = True
        if not retry or ref.attempt >= self.config.max_attempts:
            process = await self.store.get(ref.process_id)
            if process is None or process.lane is None or process.lane.turn_id != ref.turn_id:
                return None
            return await self.give_up(process, error, retried=retry, ref=ref)
        delay = self.config.retry_backoff_ms * ref.attempt if backoff else 0
        return await self.store.release_for_retry(
            ref.process_id, (ref.turn_id, ref.attempt), now + delay - 1, error
        )

    async def give_up(
        self, process: Process, error: str, *, retried: bool = True, ref: TurnRef | None = None
    ) -> Process | None:
        """The running turn of `process` failed for good. A worker process (one with a
        parent) closes STALE and its parent is told (`close_failed`); a process without one,
        a session's chat, ends the turn and stays open (`end_failed`). `ref`: the turn's last
        attempt, when this replica ran it."""
        if process.parent_process_id:
            return await self.close_failed(process, error, retried=retried)
        return await self.end_failed(process, error, retried=retried, ref=ref)

    async def end_failed(
        self, process: Process, error: str, *, retried: bool, ref: TurnRef | None
    ) -> Process | None:
        """Ends a chat's failed turn as a commit that answered nothing (failed_turn.py): its
        messages are drained, its chat stays with a notice of why, the process goes IDLE
        (PAUSED when a pause was asked) and the status event carries the detail. Nothing
        redoes the turn: the next turn is the next message's (a crash loop ends here too,
        after max_attempts, and the message that caused it is not taken again)."""
        lane = process.lane
        assert lane is not None
        detail = clean_detail(failure_detail(error, lane.attempt, retried=retried))
        if ref is None or ref.attempt != lane.attempt:
            ref = self._ref(
                process, lane, _call_for(process), list(process.owned), process.chat_count
            )
        written = await write_failed_chat(self.store, ref, detail, self.clock.now_ms())
        for record in written:
            self.events.submit(process.session_id, CHAT_APPENDED, chat_event_data(record))
        ended = await self.commit(ref, ProcessStatus.IDLE, None, failure=detail)
        if ended is None:
            # The lane went meanwhile (a stop): what was written is still told.
            await self.events.flush(process.session_id)
        else:
            self.events.end_chunks(process.session_id, process.id)
            logger.warning(
                "turn %s of %s failed for good; the chat stays open: %s",
                ref.turn_id,
                process.id,
                detail,
            )
        return ended

    async def close_failed(
        self, process: Process, error: str, *, retried: bool = True
    ) -> Process | None:
        """Closes the process STALE; its parent is told like of a commit of that turn (the
        entry is written with the close). The detail counts the attempts when the turn was
        retried, else it is the error alone."""
        lane = process.lane
        attempts = lane.attempt if lane is not None else 1
        turn_id = lane.turn_id if lane is not None else ""
        owed = [close_entry(CloseReason.STALE, turn_id)] if process.parent_process_id else []
        closed = await self.store.close_stale(
            process.id,
            turn_id,
            clean_detail(failure_detail(error, attempts, retried=retried)),
            self.clock.now_ms(),
            owed,
        )
        if closed is not None:
            logger.warning("process %s closed after %d failed attempts", process.id, attempts)
            await self._status_event(closed, ProcessStatus.RUNNING, ProcessStatus.CLOSED)
            await self._signals.outbox_written(closed)
        return closed

    async def _status_event(
        self, process: Process, old: ProcessStatus, new: ProcessStatus, *, failure: str = ""
    ) -> None:
        self.queue_status_event(process, old, new, failure=failure)
        await self.events.flush(process.session_id)

    def queue_status_event(
        self, process: Process, old: ProcessStatus, new: ProcessStatus, *, failure: str = ""
    ) -> asyncio.Future[int]:
        """Queues a status event in the session's seq order without writing it (the caller
        flushes the session's events)."""
        self._status_changed(process, new)
        data = _status_data(process, old, new)
        if failure:
            # A chat's turn that failed for good (end_failed) says why in the field a
            # CLOSED event says it, so a client that shows one shows the other.
            data["close_detail"] = failure
        return self.events.submit(process.session_id, STATUS_CHANGED, data)

    async def running_event(self, process: Process, old: ProcessStatus) -> None:
        """The RUNNING event of a turn whose lane was just taken: handed out now and stored
        with the session's next write when the event log can (`EventLog.announce`: the lane's
        write made RUNNING durable, so a crash may lose this event but never contradict it),
        else written before the turn goes on, as every other status event is."""
        data = _status_data(process, old, ProcessStatus.RUNNING)
        if self.events.announce(process.session_id, STATUS_CHANGED, data) is not None:
            self._status_changed(process, ProcessStatus.RUNNING)
            return
        await self._status_event(process, old, ProcessStatus.RUNNING)

    def _status_changed(self, process: Process, new: ProcessStatus) -> None:
        self._signals.status_changed(process.session_id)
        if new is not ProcessStatus.INIT:
            waiter = self._past_init.get(process.id)
            if waiter is not None:
                waiter.set()

    status_event = _status_event

    def past_init(self, process_id: str) -> asyncio.Event:
        """An event set when a status change of this replica moves the process out of INIT;
        the caller drops it with `forget_past_init`."""
        return self._past_init.setdefault(process_id, asyncio.Event())

    def forget_past_init(self, process_id: str) -> None:
        self._past_init.pop(process_id, None)


def _shown_detail(reason: CloseReason | None, detail: str) -> str:
    """A commit's close detail as the session's clients and the parent's model read it: an
    error's words with no keys or addresses (vance/redact.py). A DONE close's detail is the
    engine's result, not an error, and stays as it is: Slartibartfast's recipe path is what
    the delegate tool spawns."""
    done = reason is None or reason is CloseReason.DONE  # a close without a reason is DONE
    return detail if done or not detail else clean_detail(detail)


def _status_data(
    process: Process, old: ProcessStatus, new: ProcessStatus
) -> dict[str, str | None]:  # JSON: a status event's data
    data: dict[str, str | None] = {
        "think_process_id": process.id,
        "process_name": process.name,
        "engine": process.engine,
        "from_status": old.value,
        "to_status": new.value,
        "close_reason": process.close_reason.value if process.close_reason else "",
        "parent_process_id": process.parent_process_id,
    }
    if new is ProcessStatus.CLOSED and process.close_detail:
        # Why it closed, for the clients that only read events (a turn that failed says
        # why, issue 28); every other status event stays as small as it was.
        data["close_detail"] = process.close_detail
    return data


def renewal_due(config: LanesConfig, lease_until_ms: int, now_ms: int) -> bool:
    """Whether a lease would run below its floor before the next heartbeat: the floor is
    the larger of a lease less two heartbeats (9 s of 15 with the defaults) and half a
    lease. A lease is renewed only then, not at every heartbeat (each renewal is a
    statement the store executes): a turn shorter than a heartbeat or two (a hosted
    model's answer) is never renewed, a long one every other heartbeat, and a worker that
    stops heartbeating still holds its turns for at least the floor (docs/architecture.md,
    "Lanes, leases and exactly-once effects"). With a lease of four heartbeats or less
    (the tests' 6 s) the floor is half a lease and nearly every heartbeat renews."""
    lease, beat = config.lease_ms, config.heartbeat_ms
    floor = max(lease - 2 * beat, lease // 2)
    return lease_until_ms - now_ms - beat < floor


def _paused(entries: list[OutboxEntry]) -> list[OutboxEntry]:
    """The entries of a commit that became PAUSED (a pause asked meanwhile): no BLOCKED goes
    to the parent, observers hear the PAUSED status."""
    return [
        replace(e, status=ProcessStatus.PAUSED) if isinstance(e, ObserveEntry) else e
        for e in entries
        if not isinstance(e, ParentEntry)
    ]


def _call_for(process: Process) -> LifecycleCall:
    if process.status is ProcessStatus.INIT or not process.started:
        return LifecycleCall.START
    if process.call is LifecycleCall.RESUME:
        return LifecycleCall.RESUME
    return LifecycleCall.STEER
