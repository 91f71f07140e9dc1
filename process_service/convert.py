"""process_service conversions: stored events and documents <-> protos."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from google.protobuf import struct_pb2

from process_service.models import SteerResult
from process_service.process_model import ChatRecord, Process, SessionEvent
from vance import convert as c
from vance import domain as d
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


class _StructBytes:
    """The Structs of the JSON a process keeps as it was spawned (`params`, the recipe
    snapshot), serialized once per process: every steer reply and every assignment carries
    them, and building a Struct walks the JSON in Python (protobuf's `well_known_types`),
    about 95 us for Arthur's snapshot against 10 us to parse the bytes into the message. An
    entry is used only while its JSON is equal to the one given, so a changed one is
    converted again; bounded, least recently used first out."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        # (process id, field) -> (the JSON as converted, its Struct's bytes)
        self._held: OrderedDict[tuple[str, str], tuple[dict[str, Any], bytes]] = OrderedDict()

    def bytes_of(self, process_id: str, field: str, data: dict[str, Any]) -> bytes:
        if not data:
            return b""  # a steer reply's process has no snapshot: that must not evict it
        key = (process_id, field)
        held = self._held.get(key)
        if held is not None and (held[0] is data or held[0] == data):
            self._held.move_to_end(key)
            return held[1]
        raw = dict_to_struct(data).SerializeToString()
        self._held[key] = (data, raw)
        if len(self._held) > self._limit:
            self._held.popitem(last=False)
        return raw

    def forget(self, process_ids: Iterable[str]) -> None:
        for pid in process_ids:
            self._held.pop((pid, "recipe_snapshot"), None)
            self._held.pop((pid, "params"), None)


# Two fields each of the processes with a turn now and then: as many as process_store.py's
# recipe snapshot cache holds (SNAPSHOT_CACHE), a few KB each.
_STRUCTS = _StructBytes(4096)


def forget(processes: list[Process]) -> None:
    """Processes of a suspended, closed or deleted session (ProcessStore.forget)."""
    _STRUCTS.forget(p.id for p in processes)


def process_to_proto(
    p: Process,
    *,
    status: d.ProcessStatus | None = None,
    recipe_snapshot: dict[str, Any] | None = None,  # JSON, when read apart (TurnRef)
) -> pb.ThinkProcess:
    """Built from the record directly (every assignment and steer reply converts one)."""
    out = pb.ThinkProcess(
        id=p.id,
        tenant_id=p.tenant_id,
        project_id=p.project_id,
        session_id=p.session_id,
        name=p.name,
        title=p.title,
        goal=p.goal,
        engine=p.engine,
        engine_version=p.engine_version,
        recipe_name=p.recipe_name,
        parent_process_id=p.parent_process_id,
        owner_user_id=p.owner_user_id,
        status=c.status_to_proto(status or p.status),
        close_reason=c.close_reason_to_proto(p.close_reason),
        close_detail=p.close_detail,
        created_at_ms=p.created_at_ms,
        updated_at_ms=p.updated_at_ms,
        pending_count=p.pending_count,
        chat_history_summary=p.chat_history_summary,
        chat_history_summary_through=p.chat_history_summary_through,
        last_suspend_cause=p.last_suspend_cause,
        persistent_tool_calls=p.persistent_tool_calls,
        connection_profile=p.connection_profile,
    )
    snapshot = p.recipe_snapshot if recipe_snapshot is None else recipe_snapshot
    # Set even when empty, as the constructor did: a Struct field is present once assigned.
    out.recipe_snapshot.MergeFromString(_STRUCTS.bytes_of(p.id, "recipe_snapshot", snapshot))
    out.params.MergeFromString(_STRUCTS.bytes_of(p.id, "params", p.params))
    return out


def _status(value: str) -> pb.ProcessStatus:
    return c.status_to_proto(d.ProcessStatus(value) if value else None)


# Chat roles as stored in an event's data -> their proto numbers: every chunk and chat event
# converts one, and the enum's constructor is a large part of a small event's conversion.
_ROLES = {r.value: c.role_to_proto(r) for r in d.ChatRole}


def event_to_proto(event: SessionEvent) -> pb.SessionEvent:
    out = pb.SessionEvent()
    _fill_event(out, event)
    return out


def events_to_batch(events: Iterable[SessionEvent]) -> ppb.SessionEventBatch:
    """A SubscribeSessionBatches message, each event converted in its place in the batch (a
    list of converted events given to the batch's constructor is copied once more)."""
    batch = ppb.SessionEventBatch()
    add = batch.events.add
    for event in events:
        _fill_event(add(), event)
    return batch


def follow_reply_to_proto(
    events: Mapping[int, Iterable[SessionEvent]], ended: Mapping[int, str]
) -> pipb.FollowSessionsReply:
    """A FollowSessions message: a group per follow key (events converted in place, as in
    `events_to_batch`), then one per follow that ended."""
    reply = pipb.FollowSessionsReply()
    add_group = reply.groups.add
    for key, group in events.items():
        out = add_group(key=key)
        add = out.events.add
        for event in group:
            _fill_event(add(), event)
    for key, reason in ended.items():
        add_group(key=key, ended=True, reason=reason)
    return reply


def _fill_event(out: pb.SessionEvent, event: SessionEvent) -> None:
    """Sets an empty SessionEvent's fields field by field: each event goes out once per
    subscriber (a streamed answer's chunks included), and building the kind's message apart
    to copy it in costs about twice as much."""
    out.session_id = event.session_id
    out.seq = event.seq
    out.at_ms = event.at_ms
    data = event.data  # JSON, by kind (process_service/runtime/turns.py, lanes.py)
    kind = event.kind
    match kind:
        case "stream_chunk":
            chunk = out.stream_chunk
            chunk.think_process_id = data["think_process_id"]
            chunk.process_name = data["process_name"]
            chunk.role = _ROLES[data["role"]]
            chunk.chunk = data["chunk"]
        case "chat_message_appended":
            m = out.chat_message_appended
            m.id = data["chat_message_id"]
            m.session_id = event.session_id
            m.think_process_id = data["think_process_id"]
            m.process_name = data["process_name"]
            m.role = _ROLES[data["role"]]
            m.content = data["content"]
            m.created_at_ms = int(data["created_at_ms"])
            _set_struct(m.meta, data.get("meta"))
        case "process_status_changed":
            st = out.process_status_changed
            st.think_process_id = data["think_process_id"]
            st.process_name = data["process_name"]
            st.engine = data["engine"]
            st.from_status = _status(data["from_status"])
            st.to_status = _status(data["to_status"])
            st.close_reason = c.close_reason_to_proto(
                d.CloseReason(data["close_reason"]) if data.get("close_reason") else None
            )
            st.parent_process_id = data.get("parent_process_id", "")
            st.close_detail = data.get("close_detail", "")
        case "process_progress":
            pr = out.process_progress
            pr.think_process_id = data["think_process_id"]
            pr.process_name = data["process_name"]
            pr.engine = data["engine"]
            pr.parent_process_id = data.get("parent_process_id", "")
            pr.kind = data["kind"]
            _set_struct(pr.payload, data.get("payload"))
        case "notice":
            n = out.notice
            n.type = data["type"]
            _set_struct(n.data, data.get("data"))
        case _:
            raise ValueError(f"unknown event kind {kind!r}")


def _set_struct(field: struct_pb2.Struct, data: dict[str, Any] | None) -> None:
    """As `dict_to_struct` given to the constructor: the field is present even when empty."""
    field.SetInParent()
    if data:
        field.update(data)


def chat_to_proto(record: ChatRecord) -> pb.ChatMessage:
    return pb.ChatMessage(
        id=record.id,
        session_id=record.session_id,
        think_process_id=record.think_process_id,
        process_name=record.process_name,
        role=c.role_to_proto(record.role),
        content=record.content,
        created_at_ms=record.created_at_ms,
        meta=dict_to_struct(record.meta),
    )


def steer_result_to_proto(r: SteerResult) -> ppb.SteerResponse:
    out = ppb.SteerResponse(
        outcome=c.outcome_to_proto(r.outcome),
        reason=r.reason,
        message_id=r.message_id,
        duplicate=r.duplicate,
    )
    if r.process is not None:
        out.process.CopyFrom(process_to_proto(r.process))
    return out


class WorkerView(Protocol):
    """What ListWorkers tells of a connected worker (process_service/runtime/dispatcher.py's
    WorkerConn), named here so this module needs nothing of the dispatcher."""

    @property
    def worker_id(self) -> str: ...
    @property
    def engines(self) -> Mapping[str, str]: ...
    @property
    def slots(self) -> int: ...
    @property
    def free_slots(self) -> int: ...
    @property
    def draining(self) -> bool: ...
    @property
    def connected_at_ms(self) -> int: ...
    @property
    def turns(self) -> Mapping[str, object]: ...


def workers_to_proto(workers: Iterable[WorkerView]) -> ppb.ListWorkersResponse:
    return ppb.ListWorkersResponse(
        workers=[
            ppb.WorkerInfo(
                worker_id=w.worker_id,
                engines=sorted(w.engines),
                slots=w.slots,
                free_slots=max(0, w.free_slots),
                draining=w.draining,
                connected_at_ms=w.connected_at_ms,
                running_turns=sorted(w.turns),
            )
            for w in workers
        ]
    )


def suspend_cause_from_proto(value: int) -> str:
    """IDLE, DISCONNECT or FORCED; unspecified means FORCED (the system stopped the work)."""
    name = pb.SuspendCause.Name(value).removeprefix("SUSPEND_CAUSE_") if value else ""
    return name or "FORCED"


def process_spec_from_proto(request: pipb.CreateProcessRequest) -> d.ThinkProcess:
    return d.ThinkProcess(
        id="",
        tenant_id=request.tenant_id,
        project_id=request.project_id,
        session_id=request.session_id,
        name=request.name,
        title=request.title,
        goal=request.goal,
        engine=request.engine,
        engine_version=request.engine_version,
        recipe_name=request.recipe_name,
        parent_process_id=request.parent_process_id,
        owner_user_id=request.owner_user_id,
        recipe_snapshot=struct_to_dict(request.recipe_snapshot),
        params=struct_to_dict(request.params),
    )
