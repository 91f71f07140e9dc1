"""The field names of process_service's documents: records (process_model.py) <-> documents.

Only store.py uses this module; together they are the one place that knows how a process, its
lane, its inbox messages and its chat messages are laid out in the store.
"""

from __future__ import annotations

from process_service.process_model import (
    ChatRecord,
    EngineState,
    InboxMessage,
    Lane,
    MessageKind,
    ObserveEntry,
    OutboxEntry,
    ParentEntry,
    Process,
    SessionEvent,
    TurnFacts,
)
from vance.domain import (
    ChatRole,
    CloseReason,
    LifecycleCall,
    ProcessEventType,
    ProcessStatus,
    SteerMessage,
)
from vance.store import Document

# The fields of a process document that spawn writes from the caller's spec (the rest is the
# runtime state lanes.py keeps).
SPEC_FIELDS = (
    "tenant_id",
    "project_id",
    "session_id",
    "name",
    "title",
    "goal",
    "engine",
    "engine_version",
    "recipe_name",
    "parent_process_id",
    "owner_user_id",
    "close_detail",
    "chat_history_summary",
    "chat_history_summary_through",
    "last_suspend_cause",
    "persistent_tool_calls",
    "connection_profile",
)


def lane_from_doc(doc: Document | None) -> Lane | None:
    if not doc:
        return None
    hook = doc.get("hook")
    return Lane(
        turn_id=str(doc.get("turn_id") or ""),
        attempt=int(doc.get("attempt", 1)),
        worker_id=str(doc.get("worker_id") or ""),
        lease_until_ms=int(doc.get("lease_until_ms", 0)),
        hook=LifecycleCall(hook) if hook else None,
        last_error=str(doc.get("last_error") or ""),
    )


def lane_doc(lane: Lane) -> Document:
    out: Document = {
        "turn_id": lane.turn_id,
        "attempt": lane.attempt,
        "worker_id": lane.worker_id,
        "lease_until_ms": lane.lease_until_ms,
    }
    if lane.hook is not None:
        out["hook"] = lane.hook.value
    return out


def message_from_doc(doc: Document) -> InboxMessage:
    return InboxMessage(
        id=str(doc.get("id") or ""),
        key=str(doc.get("idempotency_key") or ""),
        kind=MessageKind(doc["kind"]),
        keyed=bool(doc.get("keyed")),
        body=doc,
    )


def message_of(message: SteerMessage, *, keyed: bool) -> InboxMessage:
    """The stored form of a steer message: its JSON and whether the sender chose its key."""
    return message_from_doc({**message.model_dump(mode="json"), "keyed": keyed})


def engine_state_from_doc(doc: Document) -> EngineState:
    """A process's status and message counts (ProcessStore.engine_states reads only these
    fields), as `process_from_doc` would give them."""
    get = doc.get
    return EngineState(
        process_id=doc["_id"],
        session_id=get("session_id") or "",
        status=ProcessStatus(get("status") or "INIT"),
        pending_count=len(get("pending_keys") or ()) + len(get("owned_keys") or ()),
    )


def process_from_doc(doc: Document) -> Process:
    """Runs twice per turn (a lane take, a commit): plain lookups, the values are stored with
    the types the record has (new_process_doc, store_transitions.py)."""
    get = doc.get
    reason = get("close_reason")
    hook = get("hook")
    call = get("call")
    lane = get("lane")
    pending = get("pending")
    pending_keys = get("pending_keys")
    owned = get("owned")
    owned_keys = get("owned_keys")
    drained_keys = get("drained_keys")
    outbox = get("outbox")
    return Process(
        id=doc["_id"],
        session_id=get("session_id") or "",
        name=get("name") or "",
        engine=get("engine") or "",
        status=ProcessStatus(get("status") or "INIT"),
        tenant_id=get("tenant_id") or "",
        project_id=get("project_id") or "",
        title=get("title") or "",
        goal=get("goal") or "",
        engine_version=get("engine_version") or "",
        recipe_name=get("recipe_name") or "",
        parent_process_id=get("parent_process_id") or "",
        owner_user_id=get("owner_user_id") or "",
        close_reason=CloseReason(reason) if reason else None,
        close_detail=get("close_detail") or "",
        params=get("params") or {},
        created_at_ms=get("created_at_ms") or 0,
        updated_at_ms=get("updated_at_ms") or 0,
        chat_history_summary=get("chat_history_summary") or "",
        chat_history_summary_through=get("chat_history_summary_through") or 0,
        last_suspend_cause=get("last_suspend_cause") or "",
        persistent_tool_calls=get("persistent_tool_calls") or 0,
        connection_profile=get("connection_profile") or "",
        recipe_snapshot=get("recipe_snapshot") or {},
        wake=bool(get("wake")),
        started=bool(get("started")),
        chat_count=get("chat_count") or 0,
        lane=lane_from_doc(lane) if lane else None,
        hook=LifecycleCall(hook) if hook else None,
        call=LifecycleCall(call) if call else None,
        pause_requested=bool(get("pause_requested")),
        pending=tuple(map(message_from_doc, pending)) if pending else (),
        pending_keys=None if pending_keys is None else tuple(pending_keys),
        owned=tuple(map(message_from_doc, owned)) if owned else (),
        owned_keys=tuple(owned_keys) if owned_keys else (),
        drained_keys=tuple(drained_keys) if drained_keys else (),
        outbox={k: entry_from_doc(v) for k, v in outbox.items()} if outbox else {},
        observed=bool(get("observed")),
        stopped_by=get("stopped_by") or "",
        suspended_at_ms=get("suspended_at_ms") or 0,
        seeded_from=get("seeded_from"),
    )


_PARENT = "parent"  # outbox entry kinds
_OBSERVE = "observe"


def entry_doc(entry: OutboxEntry) -> Document:
    match entry:
        case ParentEntry():
            return {
                "id": entry.id,
                "kind": _PARENT,
                "type": entry.type.value,
                "key": entry.key,
                "summary": entry.summary,
                "payload": entry.payload,
                "unless_stopped_by": entry.unless_stopped_by,
            }
        case ObserveEntry():
            t = entry.turn
            return {
                "id": entry.id,
                "kind": _OBSERVE,
                "turn": {
                    "process_id": t.process_id,
                    "session_id": t.session_id,
                    "process_name": t.process_name,
                    "turn_id": t.turn_id,
                    "call": t.call.value,
                    "chat_base": t.chat_base,
                    "highest_chat": t.highest_chat,
                },
                "status": entry.status.value,
                "close_reason": entry.close_reason.value if entry.close_reason else "",
                "summary": entry.summary,
                "payload": entry.payload,
            }


def entry_from_doc(doc: Document) -> OutboxEntry | None:
    kind = doc.get("kind")
    if kind == _PARENT:
        return ParentEntry(
            id=str(doc["id"]),
            type=ProcessEventType(doc["type"]),
            key=str(doc["key"]),
            summary=str(doc.get("summary") or ""),
            payload=dict(doc.get("payload") or {}),
            unless_stopped_by=str(doc.get("unless_stopped_by") or ""),
        )
    if kind == _OBSERVE:
        t = doc["turn"]
        reason = doc.get("close_reason")
        return ObserveEntry(
            id=str(doc["id"]),
            turn=TurnFacts(
                process_id=str(t["process_id"]),
                session_id=str(t["session_id"]),
                process_name=str(t["process_name"]),
                turn_id=str(t["turn_id"]),
                call=LifecycleCall(t["call"]),
                chat_base=int(t["chat_base"]),
                highest_chat=int(t["highest_chat"]),
            ),
            status=ProcessStatus(doc["status"]),
            close_reason=CloseReason(reason) if reason else None,
            summary=str(doc.get("summary") or ""),
            payload=dict(doc.get("payload") or {}),
        )
    return None


def new_process_doc(process: Process) -> Document:
    """The document a spawn inserts (the recipe snapshot goes to its own collection). Spec
    fields still at their empty value ("" or 0: a chat's goal, parent, summary, close detail,
    ...) are left out: process_from_doc reads a missing one as that value, no filter matches
    on them, and every compare-and-set of every turn reads and rewrites the document whole
    (in the store, its JSON with a type schema per field is parsed twice per rewrite): a
    chat's document is 1.18 KB as stored instead of 1.93 (docs/architecture.md "Store
    access")."""
    doc: Document = {f: v for f in SPEC_FIELDS if (v := getattr(process, f)) not in ("", 0)}
    doc.update(
        _id=process.id,
        status=process.status.value,
        params=process.params,
        created_at_ms=process.created_at_ms,
        updated_at_ms=process.updated_at_ms,
        wake=process.wake,
        started=process.started,
        chat_count=process.chat_count,
    )
    return doc


def event_from_doc(doc: Document) -> SessionEvent:
    return SessionEvent(
        session_id=str(doc["session_id"]),
        kind=str(doc["kind"]),
        data=dict(doc.get("data") or {}),
        at_ms=int(doc.get("at_ms") or 0),
        ephemeral=bool(doc.get("ephemeral")),
        seq=int(doc["seq"]),
    )


def event_doc(event_id: str, event: SessionEvent, *, with_data: bool) -> Document:
    """A stream chunk's document without its text is a placeholder that claims its seq."""
    return {
        "_id": event_id,
        "session_id": event.session_id,
        "kind": event.kind,
        "data": event.data if with_data else {},
        "at_ms": event.at_ms,
        "ephemeral": event.ephemeral,
        "seq": event.seq,
    }


def chat_from_doc(doc: Document) -> ChatRecord:
    return ChatRecord(
        id=str(doc["_id"]),
        session_id=str(doc.get("session_id") or ""),
        think_process_id=str(doc.get("think_process_id") or ""),
        process_name=str(doc.get("process_name") or ""),
        role=ChatRole(doc["role"]),
        content=str(doc.get("content") or ""),
        created_at_ms=int(doc.get("created_at_ms") or 0),
        meta=dict(doc.get("meta") or {}),
        turn_key=str(doc.get("turn_key") or ""),
    )


def chat_doc(record: ChatRecord) -> Document:
    return {
        "_id": record.id,
        "turn_key": record.turn_key,
        "session_id": record.session_id,
        "think_process_id": record.think_process_id,
        "process_name": record.process_name,
        "role": record.role.value,
        "content": record.content,
        "meta": record.meta,
        "created_at_ms": record.created_at_ms,
    }
