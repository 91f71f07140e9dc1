"""process_service's side of `WorkerService.WorkerConnect`, as typed messages.

This module alone converts between them and the protos of protos/vance/internal/v1/
worker.proto (the servicer calls `hello_from_proto`, `from_proto` and `to_proto`);
process_service/runtime/worker_stream.py and dispatcher.py only ever see the classes below. The
worker's side of the same stream is engine_worker/protocol.py.

Conversion runs once per message and checks nothing a proto does not: the turn path pays no
validation (docs/performance.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from process_service.convert import chat_to_proto, process_to_proto
from process_service.knowledge.memory_rpc import record_to_proto
from process_service.models import TurnRef
from process_service.process_model import ChatRecord
from vance import convert as c
from vance import domain as d
from vance.chat_ids import turn_message_ordinal
from vance.domain import ChatRole, CloseReason, ProcessStatus
from vance.internal.v1 import worker_pb2 as wkpb
from vance.protoutil import struct_to_dict
from vance.wire_batch import batch_wire as _batch_wire

# ---- worker -> process_service ----


@dataclass(frozen=True, slots=True)
class Hello:
    worker_id: str
    engines: dict[str, str]  # name -> version
    slots: int
    hooks: dict[str, list[str]] = field(default_factory=dict)  # engine -> SUSPEND, STOP
    # It reads a DispatchBatch (`batch_wire`); a worker of the older form does not, and gets
    # every message on its own.
    reads_batch: bool = False


@dataclass(frozen=True, slots=True)
class Heartbeat:
    turn_ids: list[str]


@dataclass(frozen=True, slots=True)
class Draining:
    """The worker takes no new turns (SIGTERM); running ones finish."""


@dataclass(frozen=True, slots=True)
class Capacity:
    slots: int
    reason: str


@dataclass(frozen=True, slots=True)
class ChatAppend:
    """The turn's `ordinal`-th chat message (vance/chat_ids.py)."""

    turn_id: str
    ordinal: int
    role: ChatRole
    content: str
    meta: dict[str, Any] = field(default_factory=dict)  # JSON as the engine gave it


@dataclass(frozen=True, slots=True)
class Chunk:
    turn_id: str
    role: ChatRole
    text: str


@dataclass(frozen=True, slots=True)
class Progress:
    turn_id: str
    kind: str
    payload: dict[str, Any] = field(default_factory=dict)  # JSON for the client's frame


@dataclass(frozen=True, slots=True)
class Commit:
    turn_id: str
    status: ProcessStatus
    close_reason: CloseReason | None = None
    summary: str = ""  # for the parent: the question when BLOCKED, the result when CLOSED
    payload: dict[str, Any] = field(default_factory=dict)  # JSON for the parent
    close_detail: str = ""
    # The engine's rolling chat history summary and the last chat number it covers.
    history_summary: tuple[str, int] | None = None


@dataclass(frozen=True, slots=True)
class Failure:
    turn_id: str
    error: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A message from the worker that does not convert (a bad chat message id, an unknown
    event kind): it fails its turn only (`turn_id`; "" when it names none, then it is left
    out), never the whole stream."""

    turn_id: str
    error: str


Report = ChatAppend | Chunk | Progress | Commit | Failure | Unreadable
FromWorker = Heartbeat | Draining | Capacity | Report

# ---- process_service -> worker ----


@dataclass(frozen=True, slots=True)
class Welcome:
    lease_ms: int
    heartbeat_ms: int


@dataclass(frozen=True, slots=True)
class Assign:
    ref: TurnRef
    trace: dict[str, str] | None = None  # the trace the turn joins (tracing on only)


@dataclass(frozen=True, slots=True)
class Cancel:
    turn_id: str


@dataclass(frozen=True, slots=True)
class Ack:
    """The commit of a turn is stored (ok), or was refused because the lane is no longer the
    turn's; either way the worker's slot is free again."""

    turn_id: str
    ok: bool
    error: str = ""
    # The turn's stored chat, when it is all of it (the worker then holds the chat through
    # `held_through`); None otherwise.
    chat: list[ChatRecord] | None = None
    held_through: int = 0


ToWorker = Welcome | Assign | Cancel | Ack


# ---- conversion ----


def _assignment_to_proto(ref: TurnRef) -> wkpb.DispatchMessage:
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
            recent_chat=[chat_to_proto(m) for m in ref.chat.recent],
            project_memory_included=ref.project_memory is not None,
            project_memory=[record_to_proto(r) for r in ref.project_memory or []],
            recent_chat_held=ref.chat.held,
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
        h.reads_dispatch_batch,
    )


def from_proto(msg: wkpb.WorkerMessage) -> list[FromWorker]:
    """What one stream message holds, in order: a commit carries the reports held back for it,
    which go before it; a batch carries several messages (of many turns: the chunks of every
    turn whose window ended together, engine_worker/reports.py). A message that does not
    convert becomes `Unreadable` for its turn: never raises, so one turn's bad report cannot
    end the stream that all of the worker's turns share."""
    if msg.WhichOneof("kind") != "batch":
        return _contained(msg)
    held: list[FromWorker] = []
    for one in msg.batch.messages:
        if one.WhichOneof("kind") in ("batch", "hello"):
            held.append(Unreadable("", f"a batch holds no {one.WhichOneof('kind')}"))
        else:
            held += _contained(one)
    return held


def _contained(msg: wkpb.WorkerMessage) -> list[FromWorker]:
    try:
        return _from_proto(msg)
    except Exception as exc:
        return [Unreadable(_turn_of(msg), f"unreadable {msg.WhichOneof('kind')}: {exc}")]


def _turn_of(msg: wkpb.WorkerMessage) -> str:
    match msg.WhichOneof("kind"):
        case "event":
            return msg.event.turn_id
        case "commit":
            return msg.commit.turn_id
        case "failure":
            return msg.failure.turn_id
        case _:
            return ""


def _from_proto(msg: wkpb.WorkerMessage) -> list[FromWorker]:
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
                history_summary=_history_summary(m),
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


def to_proto(item: ToWorker) -> wkpb.DispatchMessage:
    match item:
        case Welcome():
            return wkpb.DispatchMessage(
                welcome=wkpb.Welcome(lease_ms=item.lease_ms, heartbeat_ms=item.heartbeat_ms)
            )
        case Assign():
            message = _assignment_to_proto(item.ref)
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


def to_wire(item: ToWorker) -> bytes:
    """A message as the stream sends it (its encoded DispatchMessage)."""
    return to_proto(item).SerializeToString()


# DispatchMessage.batch
_BATCH_FIELD = 5


def batch_wire(messages: list[bytes]) -> bytes:
    """Several encoded messages (`to_wire`) as one DispatchBatch, in order; one goes as itself.
    Only for a worker whose hello says it reads them (`Hello.reads_batch`)."""
    return _batch_wire(_BATCH_FIELD, messages)


def _history_summary(commit: wkpb.TurnCommit) -> tuple[str, int] | None:
    """The engine's rolling chat history summary a commit sets, and the chat number it covers."""
    if not commit.HasField("chat_history_summary"):
        return None
    return commit.chat_history_summary[:8_000], int(commit.chat_history_summary_through)
