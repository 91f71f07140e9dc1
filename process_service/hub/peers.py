"""Peer events between a user's hubs (seed 001 §6.3, docs/architecture.md "Hubs that know what
each other did"): what one Eddie did that the user's other Eddie processes should know at once.

A PEER_EVENT goes into the inbox of every other active (not closed) Eddie process of the same
tenant and user, hub to hub only: the hubs of a user are kept in one `hub_peers` document
(`<tenant>:<user>`), registered by each hub's first `hub_context` call on this replica. A
suspended hub is woken by a PEER hook (process_service/runtime/lanes.py): a lane task that hands it
the pending peer events to take into its chat while its status stays SUSPENDED; the events
stay pending, so the turn that resumes the session with the user sees them too.

Debounce: one window of DEBOUNCE_S per (sending hub, receiving hub). The first fact in a
window is sent at once; the facts that follow in it are held and sent as one event when it
ends (each with its own type in `payload.facts`), which opens the next window. So a burst
wakes a peer at most twice per window whatever its kinds, and the last fact always goes out.
A fact held when process_service stops is not sent, but it is in the activity log, which the
peer reads on its next turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import Field, field_validator
from pymongo.asynchronous.database import AsyncDatabase

from process_service.hub.activity import ActivityKind, ActivityLog, Fact, describe
from process_service.hub.tool_models import HubContext
from process_service.process_model import Process
from process_service.runtime.inbox import Inbox
from process_service.runtime.lanes import Lanes
from process_service.store.process_store import ProcessStore
from process_service.tool_args import (
    Text,
    ToolArgs,
    ToolError,
    ToolResult,
    parse_args,
    reason,
)
from vance.domain import (
    HUB_ONLY_ENGINES,
    DeliveryOutcome,
    LifecycleCall,
    PeerEvent,
    PeerEventType,
    ProcessStatus,
)
from vance.json_types import JsonObject, JsonValue
from vance.store import Document

logger = logging.getLogger(__name__)

DEBOUNCE_S = 5.0
_MAX_REGISTERED = 100_000


def is_hub(caller: Process) -> bool:
    return caller.engine in HUB_ONLY_ENGINES


class PeerFact(ToolResult):
    """One fact of a PEER_EVENT's `payload.facts`."""

    type: str
    summary: str
    at_ms: int
    payload: JsonObject  # what the sending hub attached: free-form JSON, passed on unread


class NotifyArgs(ToolArgs):
    type: Text
    summary: Text
    payload: JsonObject = Field(default_factory=dict)  # free-form, for the peers to read

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        try:
            return PeerEventType(value.upper()).value
        except ValueError:
            allowed = ", ".join(t.value for t in PeerEventType)
            raise reason(f"type must be one of {allowed}") from None

    @field_validator("payload", mode="before")
    @classmethod
    def _object(cls, value: JsonValue) -> JsonValue:
        if not value:
            return {}
        if not isinstance(value, dict):
            raise reason("'payload' must be an object")
        return value


class PeerNotified(ToolResult):
    type: str
    peers: int


@dataclass
class _Window:
    until: float  # event-loop time the window ends
    caller: Process
    held: list[PeerFact] = field(default_factory=list)  # facts for the trailing event
    key: str = ""  # idempotency key of the newest held fact


class HubPeers:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        store: ProcessStore,
        inbox: Inbox,
        lanes: Lanes,
        next_turn: Callable[[Process], object],
        activity: ActivityLog,
    ) -> None:
        self._registry = db["hub_peers"]
        self._store = store
        self._inbox = inbox
        self._lanes = lanes
        self._next_turn = next_turn  # Dispatcher.next_turn
        self.activity = activity
        self._registered: set[str] = set()
        self._windows: dict[tuple[str, str], _Window] = {}
        self._changed = asyncio.Event()

    # ---- who the peers are ----

    async def register(self, caller: Process) -> None:
        """Makes this hub one of its user's hubs (once per process and replica)."""
        pid = caller.id
        if pid in self._registered:
            return
        await self._registry.update_one(
            {"_id": _owner_key(caller)},
            {"$set": {f"hubs.{pid}": caller.session_id}},
            upsert=True,
        )
        if len(self._registered) >= _MAX_REGISTERED:
            self._registered.clear()  # costs each hub one more idempotent write
        self._registered.add(pid)

    async def peers_of(self, caller: Process) -> list[Process]:
        """The user's other hub processes that are not closed."""
        doc = await self._registry.find_one({"_id": _owner_key(caller)})
        ids = [pid for pid in (doc or {}).get("hubs", {}) if pid != caller.id]
        found = await self._store.get_many(ids) if ids else []
        closed = [p.id for p in found if p.closed]
        gone = set(ids) - {p.id for p in found}
        if closed or gone:
            await self._registry.update_one(
                {"_id": _owner_key(caller)},
                {"$unset": {f"hubs.{pid}": "" for pid in [*closed, *gone]}},
            )
        return [
            p
            for p in found
            if not p.closed
            and p.owner_user_id == caller.owner_user_id
            and p.tenant_id == caller.tenant_id
        ]

    # ---- the tools, and after a tool call ----

    async def invoke(self, tool: str, caller: Process, args: JsonObject, key: str) -> ToolResult:
        if not is_hub(caller):
            raise ToolError(f"{tool} is for hubs only")
        if tool == "peer_notify":
            return await self.invoke_notify(caller, args, key)
        return await self.activity.invoke_record(caller, args, key)

    async def after_tool(
        self, tool: str, caller: Process, args: JsonObject, result: ToolResult, key: str
    ) -> ToolResult:
        """What follows a hub's successful call. `hub_context` (called every turn) gains the
        peers' activity, and registers the hub as one of its user's hubs. An organizational
        call gets an activity entry now and, for what the other hubs should know at once, a
        peer event; that never fails the call it follows."""
        if not is_hub(caller):
            return result
        if isinstance(result, HubContext):
            await self.register(caller)
            result.peer_activity = await self.activity.peers(caller)
            return result
        fact = describe(tool, args, result)
        if fact is None:
            return result
        try:
            entry = await self.activity.record(caller, fact, key)
            if fact.peer is not None:
                refs: JsonObject = {"refs": [r.to_json() for r in fact.refs]}
                await self.notify(caller, fact.peer, fact.summary, refs, key, entry.at_ms)
        except Exception:
            logger.exception("activity of %s after %s not recorded", caller.id, tool)
        return result

    async def invoke_notify(self, caller: Process, args: JsonObject, key: str) -> PeerNotified:
        """`peer_notify{type, summary, payload}`: the model tells the user's other hubs."""
        parsed = parse_args(NotifyArgs, args)
        ptype = PeerEventType(parsed.type)
        fact = Fact(ActivityKind.PEER_NOTIFIED, f"noted: {parsed.summary}")
        entry = await self.activity.record(caller, fact, key)
        sent = await self.notify(caller, ptype, parsed.summary, parsed.payload, key, entry.at_ms)
        return PeerNotified(type=ptype.value, peers=sent)

    async def notify(
        self,
        caller: Process,
        ptype: PeerEventType,
        summary: str,
        payload: JsonObject,
        key: str,
        at_ms: int,
    ) -> int:
        """Sends the fact to every peer, or holds it for the window's trailing event."""
        fact = PeerFact(type=ptype.value, summary=summary, at_ms=at_ms, payload=payload)
        now = asyncio.get_running_loop().time()
        peers = await self.peers_of(caller)
        for target in peers:
            slot = (caller.id, target.id)
            window = self._windows.get(slot)
            if window is None or now >= window.until:
                self._windows[slot] = _Window(now + DEBOUNCE_S, caller)
                await self._deliver(caller, target.id, [fact], key)
            else:
                window.held.append(fact)
                window.key = key
                self._changed.set()
        return len(peers)

    # ---- delivery ----

    async def _deliver(self, caller: Process, target: str, facts: list[PeerFact], key: str) -> None:
        last = facts[-1]
        summary = "; ".join(f.summary for f in facts)
        event = PeerEvent(
            idempotency_key=f"peer:{key}:{target}",
            sender_process_id=caller.id,
            source_session_id=caller.session_id,
            user_id=caller.owner_user_id,
            type=PeerEventType(last.type),
            human_summary=summary,
            payload={"facts": [f.to_json() for f in facts]},
        )
        result = await self._inbox.steer(target, "", "", event)
        if result.outcome is DeliveryOutcome.DEFERRED and result.process is not None:
            await self._wake(result.process)

    async def _wake(self, process: Process) -> None:
        """A suspended hub takes its peer events in a PEER hook; a paused one waits."""
        if process.status is not ProcessStatus.SUSPENDED:
            return
        hook = self._lanes.hook_for(process, LifecycleCall.PEER)
        if hook is None:
            return
        after = await self._store.ask_hook(process.id, ProcessStatus.SUSPENDED, hook)
        if after is not None:
            self._next_turn(after)

    async def run(self) -> None:
        """Sends each window's held facts when the window ends (owned by server.Background)."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            due = [(slot, w) for slot, w in self._windows.items() if w.held and w.until <= now]
            for slot, window in due:
                facts, window.held = window.held, []
                window.until = now + DEBOUNCE_S
                try:
                    await self._deliver(window.caller, slot[1], facts, window.key)
                except Exception:
                    logger.exception("peer event to %s not delivered", slot[1])
            for slot in [s for s, w in self._windows.items() if not w.held and w.until <= now]:
                del self._windows[slot]
            waiting = [w.until for w in self._windows.values() if w.held]
            timeout = max(0.0, min(waiting) - loop.time()) if waiting else None
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except TimeoutError:
                pass


def _owner_key(caller: Process) -> str:
    return f"{caller.tenant_id}:{caller.owner_user_id}"
