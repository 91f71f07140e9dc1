"""The worker's side of `WorkerService.WorkerConnect`, as typed messages.

This module alone converts between them and the protos of protos/vance/internal/v1/
worker.proto; engine_worker/worker.py, reports.py and chat_held.py only ever see the classes
below. process_service's side of the same stream is process_service/runtime/worker_protocol.py.

Conversion runs once per message, in the stream's request pump (outgoing) and reader
(incoming), and checks nothing a proto does not: the turn path pays no validation
(docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from google.protobuf import struct_pb2

from engine_worker.json_types import JsonObject
from engine_worker.memory import MemoryEntry, entry_from_proto
from vance import convert as c
from vance.domain import (
    ChatMessage,
    ChatRole,
    CloseReason,
    LifecycleCall,
    ProcessStatus,
    SteerMessage,
    ThinkProcess,
    share_fields_set,
)
from vance.internal.v1 import worker_pb2 as wkpb
from vance.protoutil import struct_to_dict
from vance.v1 import common_pb2 as pb
from vance.wire_batch import batch_wire as _batch_wire

# ---- worker -> process_service ----


@dataclass(frozen=True, slots=True)
class Hello:
    worker_id: str
    engines: dict[str, str]  # name -> version
    hooks: dict[str, list[str]]  # engine -> the hooks it implements (SUSPEND, STOP, PEER)
    slots: int
    # This worker reads a DispatchBatch (`unbatched`); False only to stand in for a worker of
    # the older form, which gets every message on its own.
    reads_batch: bool = True


@dataclass(frozen=True, slots=True)
class Heartbeat:
    turn_ids: list[str]  # turns still running here


@dataclass(frozen=True, slots=True)
class Draining:
    """No new turns from now on (SIGTERM); running ones finish."""


@dataclass(frozen=True, slots=True)
class Capacity:
    slots: int
    reason: str


@dataclass(frozen=True, slots=True)
class ChatAppend:
    """A chat message of the turn; its id comes from the turn (vance/chat_ids.py), so a redone
    turn writes it once."""

    turn_id: str
    message_id: str
    role: ChatRole
    content: str
    meta: JsonObject | None  # JSON as the engine gave it (ChatMessage.meta)


@dataclass(frozen=True, slots=True)
class Chunk:
    turn_id: str
    role: ChatRole
    text: str


@dataclass(frozen=True, slots=True)
class Progress:
    turn_id: str
    kind: str
    payload: JsonObject  # JSON for the client's frame (docs/protocol.md "process-progress")


Report = ChatAppend | Chunk | Progress


@dataclass(frozen=True, slots=True)
class Commit:
    turn_id: str
    status: ProcessStatus
    close_reason: CloseReason | None
    close_detail: str
    summary: str  # for the parent: the question when BLOCKED, the result when CLOSED
    payload: JsonObject  # JSON for the parent (TurnOutcome.payload)
    history_summary: str | None  # the engine's rolling chat history summary; None: unchanged
    history_summary_through: int
    # The reports held back until the commit, in order: process_service stores them first.
    reports: list[Report] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Failure:
    turn_id: str
    error: str


ToServer = Hello | Heartbeat | Draining | Capacity | Report | Commit | Failure

# ---- process_service -> worker ----


@dataclass(frozen=True, slots=True)
class Welcome:
    lease_ms: int
    heartbeat_ms: int


@dataclass(frozen=True, slots=True)
class Assignment:
    turn_id: str
    attempt: int
    call: LifecycleCall
    process: ThinkProcess
    pending: list[SteerMessage]  # the inbox messages the turn owns, oldest first
    chat_count: int  # chat messages the process had committed when the turn was taken
    # The last committed messages (numbers chat_count-len+1 .. chat_count), oldest first; None
    # when this worker holds them already (engine_worker/chat_held.py).
    recent_chat: list[ChatMessage] | None
    # The project's newest memory records; None: process_service did not look them up.
    project_memory: list[MemoryEntry] | None
    trace_context: dict[str, str]  # W3C trace context; empty when tracing is off


@dataclass(frozen=True, slots=True)
class Ack:
    """The turn's commit is stored (ok), or refused because the lane is no longer the turn's."""

    turn_id: str
    ok: bool
    error: str
    # With ok: the messages the turn stored (numbers chat_count+1 on), when they are all of
    # them; None otherwise.
    chat: list[ChatMessage] | None


@dataclass(frozen=True, slots=True)
class Cancel:
    """The turn was taken from this worker (stopped, lease lost): stop working on it."""

    turn_id: str


FromServer = Welcome | Assignment | Ack | Cancel


# ---- conversion ----


def to_proto(msg: ToServer) -> wkpb.WorkerMessage:
    match msg:
        case Hello():
            return wkpb.WorkerMessage(
                hello=wkpb.WorkerHello(
                    worker_id=msg.worker_id,
                    engines=[
                        wkpb.EngineDescriptor(name=n, version=v, hooks=msg.hooks.get(n))
                        for n, v in msg.engines.items()
                    ],
                    slots=msg.slots,
                    reads_dispatch_batch=msg.reads_batch,
                )
            )
        case Heartbeat():
            return wkpb.WorkerMessage(heartbeat=wkpb.WorkerHeartbeat(turn_ids=msg.turn_ids))
        case Draining():
            return wkpb.WorkerMessage(draining=wkpb.WorkerDraining())
        case Capacity():
            return wkpb.WorkerMessage(
                capacity=wkpb.WorkerCapacity(slots=msg.slots, reason=msg.reason)
            )
        case ChatAppend() | Chunk() | Progress():
            out = wkpb.WorkerMessage()
            out.event.SetInParent()
            _report_into(out.event, msg)
            return out
        case Commit():
            # Built in place, as the reports below: a message made apart and passed to its
            # parent's constructor is copied into it (the commit, and each of its reports).
            out = wkpb.WorkerMessage()
            commit = out.commit
            commit.SetInParent()
            commit.turn_id = msg.turn_id
            commit.status = c.status_to_proto(msg.status)
            commit.close_reason = c.close_reason_to_proto(msg.close_reason)
            commit.close_detail = msg.close_detail
            commit.summary_for_parent = msg.summary
            _struct_into(commit.parent_payload, msg.payload)
            if msg.history_summary is not None:  # None: unchanged, the field left unset
                commit.chat_history_summary = msg.history_summary
            if msg.history_summary_through is not None:
                commit.chat_history_summary_through = msg.history_summary_through
            events = commit.events
            for report in msg.reports:
                _report_into(events.add(), report)
            return out
        case Failure():
            return wkpb.WorkerMessage(
                failure=wkpb.TurnFailure(turn_id=msg.turn_id, error=msg.error)
            )


def to_wire(msg: ToServer) -> bytes:
    """A message as the stream sends it (its encoded WorkerMessage)."""
    return to_proto(msg).SerializeToString()


# WorkerMessage.batch
_BATCH_FIELD = 8


def batch_wire(messages: list[bytes]) -> bytes:
    """Several encoded stream messages (`to_wire`) as one WorkerBatch, in order; one goes as
    itself. Framed around the messages' own encodings (vance/wire_batch.py)."""
    return _batch_wire(_BATCH_FIELD, messages)


def _report_into(event: wkpb.TurnEvent, report: Report) -> None:
    """Fills `event` (a field of the message being built) with the report."""
    event.turn_id = report.turn_id
    match report:
        case ChatAppend():
            append = event.chat_append
            append.SetInParent()
            append.message_id = report.message_id
            append.role = c.role_to_proto(report.role)
            append.content = report.content
            _struct_into(append.meta, report.meta)
        case Chunk():
            chunk = event.stream_chunk
            chunk.SetInParent()
            chunk.chunk = report.text
            chunk.role = c.role_to_proto(report.role)
        case Progress():
            progress = event.progress
            progress.SetInParent()
            progress.kind = report.kind
            _struct_into(progress.payload, report.payload)


def _struct_into(s: struct_pb2.Struct, data: JsonObject | None) -> None:
    """A Struct field set (present even when empty, as it always was) from a dict."""
    s.SetInParent()
    if data:
        s.update(data)


def unbatched(msg: wkpb.DispatchMessage) -> Sequence[wkpb.DispatchMessage]:
    """What one stream message holds, in order: a DispatchBatch's messages (what
    process_service had queued for this worker when its stream wrote), else the message
    itself. Each is read on its own (`from_proto`): one that does not read fails its own turn
    only; a batch inside a batch does not read."""
    return msg.batch.messages if msg.WhichOneof("kind") == "batch" else (msg,)


def from_proto(msg: wkpb.DispatchMessage) -> FromServer:
    """Raises ValueError for a message this worker does not know (a newer process_service)."""
    match msg.WhichOneof("kind"):
        case "welcome":
            return Welcome(msg.welcome.lease_ms, msg.welcome.heartbeat_ms)
        case "assignment":
            return _assignment_from_proto(msg.assignment)
        case "commit_ack":
            a = msg.commit_ack
            chat = [c.chat_from_proto(m) for m in a.chat] if a.ok and a.chat_included else None
            return Ack(a.turn_id, a.ok, a.error, chat)
        case "cancel_turn_id":
            return Cancel(msg.cancel_turn_id)
        case other:
            raise ValueError(f"unexpected dispatch message {other!r}")


def assignment_turn_id(msg: wkpb.DispatchMessage) -> str:
    """The turn an undecodable assignment was for ("" for any other message), so its failure
    can be reported."""
    return msg.assignment.turn_id if msg.WhichOneof("kind") == "assignment" else ""


class _Structs:
    """A process's recipe snapshot and parameters as dicts, by the Struct's bytes: every turn
    of a chat brings the same ones (the whole recipe, its prompt and profiles), and reading
    them value by value was the largest part of decoding an assignment (about 0.1-0.3 ms a
    turn, issue 28), where their bytes cost a few microseconds. The dicts are shared by the
    turns that bring the same Struct: a process's snapshot and parameters are read, never
    changed, on this side (engines copy what they change, `ThinkEngineContext.settings`).
    A snapshot is its recipe's (the processes of one recipe share it), so a few dozen entries
    serve a worker; past them it starts over rather than hold a recipe per process."""

    _MAX = 64

    def __init__(self) -> None:
        self._held: dict[bytes, JsonObject] = {}

    def read(self, s: struct_pb2.Struct) -> JsonObject:
        if not s.fields:
            return {}
        key = s.SerializeToString(deterministic=True)
        found = self._held.get(key)
        if found is None:
            found = struct_to_dict(s)
            if len(self._held) >= self._MAX:
                self._held.clear()
            self._held[key] = found
        return found


_STRUCTS = _Structs()


def _process_from_proto(p: pb.ThinkProcess) -> ThinkProcess:
    """convert.process_from_proto, with the Structs read through `_STRUCTS`: the message is
    this worker's own (just read from the stream), so its Structs are taken out of it first."""
    snapshot, params = _STRUCTS.read(p.recipe_snapshot), _STRUCTS.read(p.params)
    p.ClearField("recipe_snapshot")
    p.ClearField("params")
    process = c.process_from_proto(p)
    process.recipe_snapshot = snapshot
    process.params = params
    # What an assignment brings lives as long as its turn is in flight: one set of field
    # names per class (share_fields_set), here and for its pending steers and chat below.
    return share_fields_set(process)


def _assignment_from_proto(a: wkpb.TurnAssignment) -> Assignment:
    return Assignment(
        turn_id=a.turn_id,
        attempt=a.attempt,
        call=c.call_from_proto(a.call),
        process=_process_from_proto(a.process),
        pending=[share_fields_set(c.steer_from_proto(m)) for m in a.pending],
        chat_count=a.chat_count,
        recent_chat=(
            None
            if a.recent_chat_held
            else [share_fields_set(c.chat_from_proto(m)) for m in a.recent_chat]
        ),
        project_memory=(
            [entry_from_proto(r) for r in a.project_memory] if a.project_memory_included else None
        ),
        trace_context=dict(a.trace_context),
    )
