"""Eddie observing workers in other projects (docs/architecture.md "Eddie").

An observation is (observed process, observer process, channel mode), stored in `observations`
under the observed process's id. When an observed process commits a turn, each observer gets a
ProcessEvent in its inbox, filtered by its mode; the event's idempotency key is derived from
the observed turn and the observer, so a redelivery is stored once. Modes:
- `verbatim`: every turn end, with all the chat the worker wrote in it;
- `milestones` (default): status transitions only (BLOCKED, a finished answer as DONE, closed);
- `summary`: milestones; Eddie condenses DONE/BLOCKED with a fast model call in its own lane;
- `inbox`: the original goes to the user's inbox, Eddie gets an acknowledgement.
Every mode hears STARTED once per (process, observer): when the observed process's start turn
commits, or at once when Eddie connects to a process (project_create) that has started already;
both paths use one idempotency key, so it is stored once whichever wins. A BLOCKED event
carries an `askId` (the question of that turn), by which the user's answer finds its way back.
Side-channel frames (progress, and the plan frames of process_service/lifecycle/plans.py) of an observed process are copied into the observer's session
whatever the mode, tagged `forwardedBy`. The observer is not the worker's parent: nothing of the
observer's lifecycle reaches the worker.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

import grpc
from pymongo.asynchronous.database import AsyncDatabase

from process_service.events.log import NOTICE, PROGRESS, EventLog
from process_service.models import TurnRef
from process_service.process_model import Process, TurnFacts
from process_service.runtime.inbox import Inbox
from process_service.store.process_store import ProcessStore
from vance.domain import (
    PARENT_EVENT_FOR_CLOSE,
    ChatRole,
    CloseReason,
    LifecycleCall,
    ProcessEvent,
    ProcessEventType,
    ProcessStatus,
)
from vance.internal.v1 import session_internal_pb2_grpc
from vance.store import Document
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

MODES = ("verbatim", "milestones", "summary", "inbox")
DEFAULT_MODE = "milestones"
_TRANSIENT = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)
_CACHE_S = 2.0  # observations change when Eddie calls a hub tool; a commit may see it 2 s late


class Observations:
    def __init__(
        self,
        db: AsyncDatabase[Document],  # the observations collection's, below
        store: ProcessStore,
        events: EventLog,
        inbox: Inbox,
        sessions: session_internal_pb2_grpc.SessionInternalServiceAsyncStub,
    ) -> None:
        self._col = db["observations"]
        self._store = store
        self._events = events
        self._inbox = inbox
        self._sessions = sessions
        # Process -> its observers (JSON, as the observations collection holds them).
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}

    async def observe(
        self,
        observed: Process,
        observer: Process,
        mode: str,
        project: str,
        *,
        started: bool = False,
    ) -> None:
        """`started`: Eddie connects to a process it just had created; if its start turn
        committed before this observation existed, STARTED is sent from here."""
        await self._col.update_one(
            {"_id": observed.id},
            {
                "$set": {
                    f"observers.{observer.id}": {
                        "mode": mode,
                        "session_id": observer.session_id,
                        "engine": observer.engine,
                        "project": project,
                    }
                }
            },
            upsert=True,
        )
        # Marks the process, so the commits of the many processes nobody observes never look.
        await self._store.mark_observed([observed.id])
        self._cache.pop(observed.id, None)
        if started:
            now = await self._store.get(observed.id)
            if now is not None and now.status not in (ProcessStatus.INIT, ProcessStatus.RUNNING):
                await self._started(
                    observed.id,
                    observed.name,
                    observer.id,
                    {"channelMode": mode, "project": project, "sessionId": observed.session_id},
                )

    async def _started(
        self,
        process_id: str,
        name: str,
        observer_id: str,
        extra: dict[str, Any],  # JSON: the event's payload
    ) -> None:
        await self._inbox.steer(
            observer_id,
            "",
            "",
            ProcessEvent(
                idempotency_key=f"{process_id}:started:obs:{observer_id}",
                sender_process_id=process_id,
                source_process_id=process_id,
                source_process_name=name,
                type=ProcessEventType.STARTED,
                human_summary=f"{name} started",
                payload=extra,
            ),
        )

    async def mark_observed(self) -> None:
        """At start: the OBSERVED mark on every observed process, also on those observed
        before the mark existed (cheap: one read, and one write when any lacks it)."""
        ids = [str(d["_id"]) async for d in self._col.find({}, {"_id": 1})]
        await self._store.mark_observed(ids)

    async def observers(self, process_id: str) -> dict[str, Any]:  # JSON, as stored
        hit = self._cache.get(process_id)
        now = time.monotonic()
        if hit is not None and now - hit[0] <= _CACHE_S:
            return hit[1]
        doc = await self._col.find_one({"_id": process_id})
        found = dict((doc or {}).get("observers") or {})
        if len(self._cache) > 20_000:
            self._cache.clear()
        self._cache[process_id] = (now, found)
        return found

    # `payload`, `data`: the engine's JSON, passed on as it was sent.
    async def forward_progress(self, ref: TurnRef, kind: str, payload: dict[str, Any]) -> None:
        for observer_id, obs in (await self.observers(ref.process_id)).items():
            session = str(obs["session_id"])
            self._events.submit(
                session,
                PROGRESS,
                {
                    "think_process_id": ref.process_id,
                    "process_name": ref.process_name,
                    "engine": ref.engine,
                    "parent_process_id": "",
                    "kind": kind,
                    "payload": {
                        **payload,
                        "forwardedBy": {
                            "engine": obs.get("engine") or "eddie",
                            "processId": observer_id,
                            "viaSession": session,
                        },
                    },
                },
            )
            await self._events.flush(session)

    async def forward_notice(self, process_id: str, type_: str, data: dict[str, Any]) -> None:
        """A plan frame of an observed process, copied into each observer's session with the
        hop in `forwardedBy` (the gateway lifts it into the envelope)."""
        for observer_id, obs in (await self.observers(process_id)).items():
            session = str(obs["session_id"])
            hop = {
                "engine": obs.get("engine") or "eddie",
                "processId": observer_id,
                "viaSession": session,
            }
            self._events.submit(
                session, NOTICE, {"type": type_, "data": {**data, "forwardedBy": hop}}
            )
            await self._events.flush(session)

    async def on_commit(
        self,
        ref: TurnFacts,
        process: Process,
        summary: str,
        payload: dict[str, Any],  # the engine's JSON
    ) -> None:
        """Tells the observers of a committed turn (the commit's outbox entry, delivered by
        process_service/runtime/outbox.py at least once; every message is keyed by turn and observer).
        `process` carries the status the commit set; `payload` is the engine's JSON."""
        observers = await self.observers(ref.process_id)
        if not observers:
            return
        final = process.status
        event_type = _milestone(final, process, summary)
        for observer_id, obs in observers.items():
            mode = str(obs.get("mode") or DEFAULT_MODE)
            if ref.call is LifecycleCall.START:
                base = {
                    "channelMode": mode,
                    "project": obs.get("project", ""),
                    "sessionId": ref.session_id,
                }
                await self._started(ref.process_id, ref.process_name, observer_id, base)
            if mode == "verbatim":
                text = await self._turn_chat(ref) or summary
                kind = event_type or ProcessEventType.SUMMARY
            elif event_type is None:
                continue
            else:
                text, kind = summary, event_type
            extra: dict[str, Any] = {  # JSON: added to the event's payload
                "channelMode": mode,
                "project": obs.get("project", ""),
                "sessionId": ref.session_id,
                "status": final.value,
            }
            if kind is ProcessEventType.BLOCKED:
                extra["askId"] = ask_id(ref.process_id, ref.turn_id)
            if mode == "inbox":
                item = await self._to_user_inbox(ref, process, kind, text, observer_id)
                extra["inboxItemId"] = item
                text = (
                    f"{ref.process_name} in {obs.get('project', '')} is {kind.value.lower()}; "
                    "its output is in the user's inbox"
                )
            message = ProcessEvent(
                idempotency_key=f"{ref.process_id}:{ref.turn_id}:obs:{observer_id}",
                sender_process_id=ref.process_id,
                source_process_id=ref.process_id,
                source_process_name=ref.process_name,
                type=kind,
                human_summary=text or f"{ref.process_name} {kind.value.lower()}",
                payload={**payload, **extra},
            )
            result = await self._inbox.steer(observer_id, "", "", message)
            logger.debug("observer %s told of %s: %s", observer_id, kind, result.outcome)

    async def _turn_chat(self, ref: TurnFacts) -> str:
        """What the worker wrote in this turn (its assistant messages), oldest first."""
        first, last = ref.chat_base + 1, max(ref.highest_chat, ref.chat_base)
        if last < first:
            return ""
        found = await self._store.chat_range(ref.process_id, first, last)
        return "\n\n".join(m.content for m in found if m.role is ChatRole.ASSISTANT)

    async def _to_user_inbox(
        self,
        ref: TurnFacts,
        process: Process,
        kind: ProcessEventType,
        text: str,
        observer_id: str,
    ) -> str:
        try:
            item = await self._sessions.AddInboxItem(
                spb.InboxItem(
                    tenant_id=process.tenant_id,
                    user_id=process.owner_user_id,
                    title=f"{ref.process_name} {kind.value.lower()}",
                    body=text,
                    source_process_id=ref.process_id,
                    source_session_id=ref.session_id,
                    idempotency_key=f"{ref.process_id}:{ref.turn_id}:obs:{observer_id}",
                )
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() in _TRANSIENT:
                raise  # the outbox entry stays and is delivered again (keyed: stored once)
            logger.warning("inbox item for %s failed: %s", observer_id, exc.code().name)
            return ""
        return str(item.id)


def ask_id(process_id: str, turn_id: str) -> str:
    """The id of the question a worker asked in one turn: the same for every observer."""
    return "ask_" + hashlib.sha1(f"{process_id}:{turn_id}".encode()).hexdigest()[:12]


def _milestone(final: ProcessStatus, process: Process, summary: str) -> ProcessEventType | None:
    """A status transition worth telling an observer; a chat's finished answer counts as DONE
    (a chat engine never closes, it goes IDLE with its answer)."""
    if final is ProcessStatus.BLOCKED:
        return ProcessEventType.BLOCKED
    if final is ProcessStatus.CLOSED:
        return PARENT_EVENT_FOR_CLOSE[process.close_reason or CloseReason.DONE]
    if final is ProcessStatus.IDLE and summary:
        return ProcessEventType.DONE
    return None
