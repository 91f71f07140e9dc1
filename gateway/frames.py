"""Frames: the envelope, session events rendered as the frames clients receive, and their JSON
text (`encode_frame`, `event_text`): every frame the gateway sends is encoded here."""

from __future__ import annotations

import functools
import itertools
import json
import time
from typing import Any

import orjson

from vance.ids import new_id
from vance.protoutil import struct_to_dict
from vance.v1 import common_pb2 as pb


class _FrameIds:
    """Frame ids as docs/protocol.md shapes them, `f_<time><random>`, at a counter's cost: the
    time part is rendered at most once a second, the random part is drawn once per process (so
    ids stay unique across gateway replicas), and a counter follows it. vance/ids.py's `new_id`
    reads os.urandom and renders 19 base-36 digits per call: once per pushed frame that was
    about 5% of the gateway's CPU at a model's real pace (issue 28)."""

    def __init__(self) -> None:
        self._until = 0.0
        self._head = ""
        self._random = new_id("")[-6:]  # base 36, like new_id's own random part
        self._count = itertools.count()

    def next(self) -> str:
        now = time.monotonic()
        if now >= self._until:
            self._until = now + 1.0
            # new_id's time part (its first 9 characters after the prefix's "_").
            self._head = f"f_{new_id('')[1:10]}{self._random}"
        return f"{self._head}{next(self._count):x}"


_frame_ids = _FrameIds()


def frame(
    type_: str, data: dict[str, Any], *, reply_to: str | None = None, seq: int | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": _frame_ids.next(),
        "replyTo": reply_to,
        "type": type_,
        "data": data,
    }
    if seq is not None:
        out["seq"] = seq
    return out


def error_frame(code: int, message: str, reason: str, *, reply_to: str | None) -> dict[str, Any]:
    return frame(
        "error", {"errorCode": code, "errorMessage": message, "reason": reason}, reply_to=reply_to
    )


def encode_frame(data: dict[str, Any]) -> str:
    """A frame's JSON text, compact. orjson is ~10x the standard encoder on these small dicts
    (json.dumps builds an encoder per call: ~7% of the gateway's CPU at a model's pace, issue
    28). What orjson refuses (an integer beyond 64 bits a client echoed in `ping`, a lone
    surrogate) goes through the standard encoder as before; a non-finite number cannot reach
    here (vance/protoutil.py refuses it in a Struct) and that encoder would refuse it too."""
    try:
        return orjson.dumps(data).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(data, separators=(",", ":"), allow_nan=False)


def _json_str(value: str) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # a lone surrogate
        return json.dumps(value)


def _enum_names(enum: Any, prefix: str) -> dict[int, str]:
    return {number: name.removeprefix(prefix) for name, number in enum.items()}


# Enum names by number: a dict read instead of the descriptor walk of `Name()` per frame.
_STATUS_NAMES = _enum_names(pb.ProcessStatus, "PROCESS_STATUS_")
_CLOSE_REASONS = _enum_names(pb.CloseReason, "CLOSE_REASON_")
_ROLE_NAMES = {n: name.lower() for n, name in _enum_names(pb.ChatRole, "CHAT_ROLE_").items()}


def status_name(value: int) -> str:
    if not value:
        return ""
    name = _STATUS_NAMES.get(value)
    # A number this gateway's protos do not know: Name() raises ValueError, as it always did.
    return name if name is not None else pb.ProcessStatus.Name(value)


def close_reason_name(value: int) -> str:
    if not value:
        return ""
    name = _CLOSE_REASONS.get(value)
    return name if name is not None else pb.CloseReason.Name(value)


def role_name(value: int) -> str:
    name = _ROLE_NAMES.get(value)
    return name if name is not None else pb.ChatRole.Name(value)


def chat_message_data(m: pb.ChatMessage) -> dict[str, Any]:
    return {
        "chatMessageId": m.id,
        "thinkProcessId": m.think_process_id,
        "processName": m.process_name,
        "role": role_name(m.role),
        "content": m.content,
        "createdAt": m.created_at_ms,
        "meta": struct_to_dict(m.meta),
    }


def close_detail(p: pb.ThinkProcess) -> str | None:
    """Why the process closed, in words; None unless it is CLOSED (a process document keeps
    the field through a later reopening)."""
    if p.status != pb.PROCESS_STATUS_CLOSED:
        return None
    return p.close_detail or None


def process_data(p: pb.ThinkProcess) -> dict[str, Any]:
    return {
        "thinkProcessId": p.id,
        "processName": p.name,
        "title": p.title,
        "goal": p.goal,
        "engine": p.engine,
        "recipe": p.recipe_name,
        "status": status_name(p.status),
        "closeReason": close_reason_name(p.close_reason) or None,
        "closeDetail": close_detail(p),
        "parentProcessId": p.parent_process_id or None,
        "pendingCount": p.pending_count,
        "createdAt": p.created_at_ms,
    }


@functools.lru_cache(maxsize=4096)
def _chunk_middle(think_process_id: str, process_name: str, role: int) -> str:
    """What a process's chunk frames share, between the frame's id and its chunk text."""
    return (
        ',"replyTo":null,"type":"chat-message-stream-chunk","data":{"thinkProcessId":'
        f'{_json_str(think_process_id)},"processName":{_json_str(process_name)},'
        f'"role":{_json_str(role_name(role))},"chunk":'
    )


def event_text(e: pb.SessionEvent) -> str:
    """A session event as the JSON text of its frame (`event_frame`, encoded). A chunk frame,
    the one a streamed answer sends several of, is put together from the parts its process's
    chunks share: the same text `encode_frame(event_frame(e))` gives, keys in the same order."""
    if e.WhichOneof("kind") == "stream_chunk":
        c = e.stream_chunk
        middle = _chunk_middle(c.think_process_id, c.process_name, c.role)
        return f'{{"id":"{_frame_ids.next()}"{middle}{_json_str(c.chunk)}}},"seq":{e.seq}}}'
    return encode_frame(event_frame(e))


def event_frame(e: pb.SessionEvent) -> dict[str, Any]:
    """A session event as the frame pushed to the client; the envelope carries its seq."""
    kind = e.WhichOneof("kind")
    match kind:
        case "chat_message_appended":
            return frame(
                "chat-message-appended", chat_message_data(e.chat_message_appended), seq=e.seq
            )
        case "stream_chunk":
            c = e.stream_chunk
            return frame(
                "chat-message-stream-chunk",
                {
                    "thinkProcessId": c.think_process_id,
                    "processName": c.process_name,
                    "role": role_name(c.role),
                    "chunk": c.chunk,
                },
                seq=e.seq,
            )
        case "process_status_changed":
            s = e.process_status_changed
            return frame(
                "process-progress",
                {
                    "processId": s.think_process_id,
                    "processName": s.process_name,
                    "engine": s.engine,
                    "sessionId": e.session_id,
                    "parentProcessId": s.parent_process_id or None,
                    "kind": "STATUS",
                    "status": status_name(s.to_status),
                    "previousStatus": status_name(s.from_status),
                    "closeReason": close_reason_name(s.close_reason) or None,
                    "closeDetail": s.close_detail or None,
                },
                seq=e.seq,
            )
        case "process_progress":
            g = e.process_progress
            payload = struct_to_dict(g.payload)
            # A worker's side-channel frame forwarded into a hub session (process_service/
            # observations.py): the hop is an envelope field, not part of the payload.
            forwarded = payload.pop("forwardedBy", None)
            out = frame(
                "process-progress",
                {
                    "processId": g.think_process_id,
                    "processName": g.process_name,
                    "engine": g.engine,
                    "sessionId": e.session_id,
                    "parentProcessId": g.parent_process_id or None,
                    "kind": g.kind,
                    "payload": payload,
                },
                seq=e.seq,
            )
            if forwarded:
                out["forwardedBy"] = forwarded
            return out
        case "notice":
            data = struct_to_dict(e.notice.data)
            # A worker's plan frame a hub forwards (process_service/lifecycle/plans.py): the hop goes
            # into the envelope, as for process-progress.
            hop = data.pop("forwardedBy", None)
            notice = frame(e.notice.type, data, seq=e.seq)
            if hop:
                notice["forwardedBy"] = hop
            return notice
        case _:
            raise ValueError(f"unknown session event {kind!r}")
