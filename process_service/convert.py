"""process_service conversions: stored events and documents <-> protos."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from process_service.dispatcher import WorkerConn
from process_service.memory_rpc import record_to_proto
from process_service.models import SteerResult, TurnRef
from process_service.process_model import ChatRecord, Process, SessionEvent
from process_service.worker_messages import (
    Ack,
    Assign,
    Cancel,
    Capacity,
    ChatAppend,
    Chunk,
    Commit,
    Draining,
    Failure,
    FromWorker,
    Heartbeat,
    Hello,
    Progress,
    Report,
    ToWorker,
    Welcome,
)
from vance import convert as c
from vance import domain as d
from vance.chat_ids import turn_message_ordinal
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import worker_pb2 as wkpb
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb


def process_to_proto(
    p: Process,
    *,
    status: d.ProcessStatus | None = None,
    recipe_snapshot: dict[str, Any] | None = None,  # JSON, when read apart (TurnRef)
) -> pb.ThinkProcess:
    """Built from the record directly (every assignment and steer reply converts one)."""
    return pb.ThinkProcess(
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
        recipe_snapshot=dict_to_struct(
            p.recipe_snapshot if recipe_snapshot is None else recipe_snapshot
        ),
        params=dict_to_struct(p.params),
        created_at_ms=p.created_at_ms,
        updated_at_ms=p.updated_at_ms,
        pending_count=p.pending_count,
        chat_history_summary=p.chat_history_summary,
        chat_history_summary_through=p.chat_history_summary_through,
        last_suspend_cause=p.last_suspend_cause,
        persistent_tool_calls=p.persistent_tool_calls,
        connection_profile=p.connection_profile,
    )


def _status(value: str) -> pb.ProcessStatus:
    return c.status_to_proto(d.ProcessStatus(value) if value else None)


def event_to_proto(event: SessionEvent) -> pb.SessionEvent:
    out = pb.SessionEvent(session_id=event.session_id, seq=event.seq, at_ms=event.at_ms)
    data = event.data  # JSON, by kind (process_service/turns.py, lanes.py)
    kind = event.kind
    match kind:
        case "chat_message_appended":
            out.chat_message_appended.CopyFrom(
                pb.ChatMessage(
                    id=data["chat_message_id"],
                    session_id=event.session_id,
                    think_process_id=data["think_process_id"],
                    process_name=data["process_name"],
                    role=c.role_to_proto(d.ChatRole(data["role"])),
                    content=data["content"],
                    created_at_ms=int(data["created_at_ms"]),
                    meta=dict_to_struct(data.get("meta")),
                )
            )
        case "stream_chunk":
            out.stream_chunk.CopyFrom(
                pb.StreamChunk(
                    think_process_id=data["think_process_id"],
                    process_name=data["process_name"],
                    role=c.role_to_proto(d.ChatRole(data["role"])),
                    chunk=data["chunk"],
                )
            )
        case "process_status_changed":
            out.process_status_changed.CopyFrom(
                pb.ProcessStatusChanged(
                    think_process_id=data["think_process_id"],
                    process_name=data["process_name"],
                    engine=data["engine"],
                    from_status=_status(data["from_status"]),
                    to_status=_status(data["to_status"]),
                    close_reason=c.close_reason_to_proto(
                        d.CloseReason(data["close_reason"]) if data.get("close_reason") else None
                    ),
                    parent_process_id=data.get("parent_process_id", ""),
                )
            )
        case "process_progress":
            out.process_progress.CopyFrom(
                pb.ProcessProgress(
                    think_process_id=data["think_process_id"],
                    process_name=data["process_name"],
                    engine=data["engine"],
                    parent_process_id=data.get("parent_process_id", ""),
                    kind=data["kind"],
                    payload=dict_to_struct(data.get("payload")),
                )
            )
        case "notice":
            out.notice.CopyFrom(pb.Notice(type=data["type"], data=dict_to_struct(data.get("data"))))
        case _:
            raise ValueError(f"unknown event kind {kind!r}")
    return out


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


def assignment_to_proto(ref: TurnRef) -> wkpb.DispatchMessage:
    return wkpb.DispatchMessage(
        assignment=wkpb.TurnAssignment(
            turn_id=ref.turn_id,
            attempt=ref.attempt,
            call=c.call_to_proto(ref.call),
            process=process_to_proto(
                ref.process, status=ref.status, recipe_snapshot=ref.recipe_snapshot
            ),
            pending=[c.steer_to_proto(m.steer()) for m in ref.owned],
            lease_deadline_ms=ref.lease_until_ms,
            chat_count=ref.chat_base,
            recent_chat=[chat_to_proto(m) for m in ref.recent_chat],
            project_memory_included=ref.project_memory is not None,
            project_memory=[record_to_proto(r) for r in ref.project_memory or []],
            recent_chat_held=ref.chat_held,
        )
    )


def hello_from_proto(msg: wkpb.WorkerMessage) -> Hello:
    if msg.WhichOneof("kind") != "hello" or not msg.hello.worker_id:
        raise ValueError("the first message is hello")
    h = msg.hello
    return Hello(
        h.worker_id,
        {e.name: e.version for e in h.engines},
        h.slots,
        {e.name: list(e.hooks) for e in h.engines if e.hooks},
    )


def worker_message_from_proto(msg: wkpb.WorkerMessage) -> list[FromWorker]:
    """What one stream message holds: a commit carries the reports held back for it, which go
    before it."""
    match msg.WhichOneof("kind"):
        case "heartbeat":
            return [Heartbeat(list(msg.heartbeat.turn_ids))]
        case "draining":
            return [Draining()]
        case "capacity":
            return [Capacity(max(0, msg.capacity.slots), msg.capacity.reason)]
        case "event":
            return [_report_from_proto(msg.event)]
        case "commit":
            m = msg.commit
            commit = Commit(
                turn_id=m.turn_id,
                status=c.status_from_proto(m.status) or d.ProcessStatus.IDLE,
                close_reason=c.close_reason_from_proto(m.close_reason),
                summary=m.summary_for_parent,
                payload=struct_to_dict(m.parent_payload),
                close_detail=m.close_detail,
                history_summary=history_summary(m),
            )
            return [*(_report_from_proto(e, m.turn_id) for e in m.events), commit]
        case "failure":
            return [Failure(msg.failure.turn_id, msg.failure.error)]
        case other:
            raise ValueError(f"unexpected worker message {other!r}")


def _report_from_proto(event: wkpb.TurnEvent, turn_id: str = "") -> Report:
    turn_id = turn_id or event.turn_id
    match event.WhichOneof("kind"):
        case "chat_append":
            a = event.chat_append
            return ChatAppend(
                turn_id,
                turn_message_ordinal(a.message_id),
                c.role_from_proto(a.role),
                a.content,
                struct_to_dict(a.meta),
            )
        case "stream_chunk":
            return Chunk(
                turn_id, c.role_from_proto(event.stream_chunk.role), event.stream_chunk.chunk
            )
        case "progress":
            return Progress(turn_id, event.progress.kind, struct_to_dict(event.progress.payload))
        case other:
            raise ValueError(f"unexpected turn event {other!r}")


def to_worker_proto(item: ToWorker) -> wkpb.DispatchMessage:
    match item:
        case Welcome():
            return wkpb.DispatchMessage(
                welcome=wkpb.Welcome(lease_ms=item.lease_ms, heartbeat_ms=item.heartbeat_ms)
            )
        case Assign():
            message = assignment_to_proto(item.ref)
            if item.trace:
                message.assignment.trace_context.update(item.trace)
            return message
        case Cancel():
            return wkpb.DispatchMessage(cancel_turn_id=item.turn_id)
        case Ack():
            return wkpb.DispatchMessage(
                commit_ack=wkpb.TurnAck(
                    turn_id=item.turn_id,
                    ok=item.ok,
                    error=item.error,
                    chat_included=item.chat is not None,
                    chat=[chat_to_proto(m) for m in item.chat or []],
                )
            )


def workers_to_proto(workers: Iterable[WorkerConn]) -> ppb.ListWorkersResponse:
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


def history_summary(commit: wkpb.TurnCommit) -> tuple[str, int] | None:
    """The engine's rolling chat history summary a commit sets, and the chat number it covers."""
    if not commit.HasField("chat_history_summary"):
        return None
    return commit.chat_history_summary[:8_000], int(commit.chat_history_summary_through)
