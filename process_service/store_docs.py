"""The field names of process_service's documents: records (process_model.py) <-> documents.

Only store.py uses this module; together they are the one place that knows how a process, its
lane, its inbox messages and its chat messages are laid out in the store.
"""

from __future__ import annotations

from typing import Any

from process_service.process_model import ChatRecord, InboxMessage, Lane, Process
from vance.domain import ChatRole, CloseReason, LifecycleCall, ProcessStatus, SteerMessage
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
        kind=str(doc.get("kind") or ""),
        keyed=bool(doc.get("keyed")),
        body=doc,
    )


def message_of(message: SteerMessage, *, keyed: bool) -> InboxMessage:
    """The stored form of a steer message: its JSON and whether the sender chose its key."""
    return message_from_doc({**message.model_dump(mode="json"), "keyed": keyed})


def _messages(docs: Any) -> tuple[InboxMessage, ...]:  # Any: a list of JSON documents or None
    return tuple(message_from_doc(m) for m in docs) if docs else ()


def _keys(docs: Any) -> tuple[str, ...]:  # Any: a list of strings or None
    return tuple(str(k) for k in docs) if docs else ()


def process_from_doc(doc: Document) -> Process:
    reason = doc.get("close_reason")
    hook = doc.get("hook")
    call = doc.get("call")
    pending_keys = doc.get("pending_keys")
    return Process(
        id=str(doc["_id"]),
        session_id=str(doc.get("session_id") or ""),
        name=str(doc.get("name") or ""),
        engine=str(doc.get("engine") or ""),
        status=ProcessStatus(doc.get("status") or ProcessStatus.INIT.value),
        tenant_id=str(doc.get("tenant_id") or ""),
        project_id=str(doc.get("project_id") or ""),
        title=str(doc.get("title") or ""),
        goal=str(doc.get("goal") or ""),
        engine_version=str(doc.get("engine_version") or ""),
        recipe_name=str(doc.get("recipe_name") or ""),
        parent_process_id=str(doc.get("parent_process_id") or ""),
        owner_user_id=str(doc.get("owner_user_id") or ""),
        close_reason=CloseReason(reason) if reason else None,
        close_detail=str(doc.get("close_detail") or ""),
        params=dict(doc.get("params") or {}),
        created_at_ms=int(doc.get("created_at_ms") or 0),
        updated_at_ms=int(doc.get("updated_at_ms") or 0),
        chat_history_summary=str(doc.get("chat_history_summary") or ""),
        chat_history_summary_through=int(doc.get("chat_history_summary_through") or 0),
        last_suspend_cause=str(doc.get("last_suspend_cause") or ""),
        persistent_tool_calls=int(doc.get("persistent_tool_calls") or 0),
        connection_profile=str(doc.get("connection_profile") or ""),
        recipe_snapshot=dict(doc.get("recipe_snapshot") or {}),
        wake=bool(doc.get("wake")),
        started=bool(doc.get("started")),
        chat_count=int(doc.get("chat_count") or 0),
        lane=lane_from_doc(doc.get("lane")),
        hook=LifecycleCall(hook) if hook else None,
        call=LifecycleCall(call) if call else None,
        pause_requested=bool(doc.get("pause_requested")),
        pending=_messages(doc.get("pending")),
        pending_keys=None if pending_keys is None else _keys(pending_keys),
        owned=_messages(doc.get("owned")),
        owned_keys=_keys(doc.get("owned_keys")),
        drained_keys=_keys(doc.get("drained_keys")),
        outbox=dict(doc.get("outbox") or {}),
        observed=bool(doc.get("observed")),
        stopped_by=str(doc.get("stopped_by") or ""),
        suspended_at_ms=int(doc.get("suspended_at_ms") or 0),
        seeded_from=doc.get("seeded_from"),
    )


def new_process_doc(process: Process) -> Document:
    """The document a spawn inserts (the recipe snapshot goes to its own collection)."""
    doc: Document = {f: getattr(process, f) for f in SPEC_FIELDS}
    doc.update(
        _id=process.id,
        status=process.status.value,
        close_reason=None,
        params=process.params,
        created_at_ms=process.created_at_ms,
        updated_at_ms=process.updated_at_ms,
        wake=process.wake,
        started=process.started,
        chat_count=process.chat_count,
    )
    return doc


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
