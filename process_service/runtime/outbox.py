"""The outbox: the cross-process messages a commit owes, written in the commit's own store write
and delivered at least once (docs/architecture.md "The outbox").

An entry lives in the sending process's document under `outbox.<entry id>`, set by the same
compare-and-set that commits the turn, closes or stops the process, so no crash point separates
the two. Delivery steers each entry's message into its target's inbox with an idempotency key
derived from the sender's turn (a redelivery is stored once: `Inbox.steer`), then unsets the
delivered entries in one write. That write is the outbox's only cost, and only a turn that owes
something pays it: a child closing or blocking (process_service/runtime/parent_notify.py), an observed
process's commit (process_service/lifecycle/observations.py); an ordinary chat turn writes no entry.

Delivery runs at once after the write; an entry left behind (a crash before its delivery, a
failed delivery, a replica that died) is delivered by `run`: a scan when this replica starts
and every `scan_every_s` after (the dispatcher's sweep cadence), at a retry after a failure,
and whenever a lane of the process is taken (`note`). No turn polls.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any, Protocol

from process_service.models import TurnRef
from process_service.process_model import (
    ObserveEntry,
    OutboxEntry,
    ParentEntry,
    Process,
    TurnFacts,
)
from process_service.runtime.fault_points import FaultPoint
from process_service.runtime.inbox import Inbox
from process_service.runtime.lane_signals import LaneSignals
from process_service.runtime.parent_notify import parent_message
from process_service.store.process_store import ProcessStore
from vance.domain import CloseReason, ProcessStatus
from vance.ids import new_id

logger = logging.getLogger(__name__)


class CommitObservers(Protocol):
    """Who hears of a committed turn besides its parent: the hub's observers
    (process_service/lifecycle/observations.py). Named here so the runtime does not import the
    lifecycle package, which builds on it."""

    async def on_commit(
        self,
        ref: TurnFacts,
        process: Process,
        summary: str,
        payload: dict[str, Any],  # the engine's JSON
    ) -> None: ...

    async def forward_progress(
        self,
        ref: TurnRef,
        kind: str,
        payload: dict[str, Any],  # the engine's progress JSON
    ) -> None: ...


RETRY_S = 2.0


def observe_entry(
    facts: TurnFacts,
    status: ProcessStatus,
    close_reason: CloseReason | None,
    summary: str,
    payload: dict[str, Any],  # the engine's JSON, passed on as it was sent
) -> ObserveEntry:
    """The observers of a committed turn are to hear of it (who they are is read at delivery:
    Eddie may add one meanwhile). `status`/`close_reason`: what the commit set, as a later
    delivery must tell it whatever the process did since."""
    return ObserveEntry(new_id("ob"), facts, status, close_reason, summary, payload)


class Outbox:
    def __init__(
        self,
        store: ProcessStore,
        inbox: Inbox,
        signals: LaneSignals,
        *,
        observations: CommitObservers | None,
        scan_every_s: float,
        exit_before_delivery: str = "",
    ) -> None:
        """`exit_before_delivery`: a test's fault hook (VANCE_FAULT_EXIT_BEFORE_OUTBOX): when
        a file of that name exists, the first delivery removes it and ends the process at once,
        after the commit and before any message left (tests/test_outbox.py)."""
        self._store = store
        self._inbox = inbox
        self._fault = FaultPoint(exit_before_delivery, "between a commit and its outbox delivery")
        self._scan_every_s = scan_every_s
        self.observations = observations  # the hub's observers (observations.py)
        self._retry: set[str] = set()
        self._wake = asyncio.Event()
        signals.subscribe_outbox(self.deliver, self.note)

    async def deliver(self, process: Process | None) -> None:
        """Delivers what the process's outbox holds; failures stay for a retry."""
        if process is None or not process.outbox:
            return
        entries = process.outbox
        self._fault.hit()
        pid = process.id
        done: list[str] = []
        for entry_id in sorted(entries):  # ids are time-ordered: a BLOCKED before its CLOSED
            try:
                await self._send(process, entries[entry_id])
            except Exception as exc:
                logger.warning("outbox entry %s of %s not delivered: %s", entry_id, pid, exc)
                self._retry.add(pid)
                self._wake.set()
                continue
            done.append(entry_id)
        if done:
            try:
                await self._store.clear_outbox(pid, done)
            except Exception as exc:  # delivered: a later delivery is deduplicated
                logger.warning("outbox of %s not cleared: %s", pid, exc)

    def note(self, process: Process) -> None:
        """A process this replica read anyway (a lane taken) still holds entries: deliver
        them from `run`."""
        if process.outbox:
            self._retry.add(process.id)
            self._wake.set()

    async def scan(self) -> int:
        """Delivers every outbox left in the store; returns how many processes had one."""
        found = await self._store.with_outbox()
        for process in found:
            await self.deliver(process)
        return len(found)

    async def run(self) -> None:
        """Owned by process_service's background task group: the scan at start and every
        `scan_every_s` (the lane sweep's cadence), retries and noted documents between."""
        loop = asyncio.get_running_loop()
        next_scan = loop.time()
        while True:
            if loop.time() >= next_scan:
                try:
                    found = await self.scan()
                    if found:
                        logger.info("delivered the outboxes of %d processes", found)
                except Exception:
                    logger.exception("outbox scan failed")
                next_scan = loop.time() + self._scan_every_s
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=next_scan - loop.time())
            except TimeoutError:
                continue
            self._wake.clear()
            await asyncio.sleep(RETRY_S if self._retry else 0)
            ids, self._retry = sorted(self._retry), set()
            try:
                again = await self._store.get_many(ids)
            except Exception as exc:
                logger.warning("outbox retry of %d processes failed: %s", len(ids), exc)
                self._retry.update(ids)
                self._wake.set()
                continue
            for process in again:
                await self.deliver(process)

    async def _send(self, process: Process, entry: OutboxEntry | None) -> None:
        match entry:
            case ParentEntry():
                found = parent_message(process, entry)
                if found is not None:
                    parent, message = found
                    result = await self._inbox.steer(parent, "", "", message)
                    logger.debug(
                        "notified parent %s of %s: %s", parent, message.type, result.outcome
                    )
            case ObserveEntry():
                if self.observations is not None:
                    committed = replace(
                        process, status=entry.status, close_reason=entry.close_reason
                    )
                    await self.observations.on_commit(
                        entry.turn, committed, entry.summary, dict(entry.payload)
                    )
            case None:
                logger.error("outbox entry of an unknown kind of %s dropped", process.id)
