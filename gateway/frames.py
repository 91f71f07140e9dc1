"""Frames: the envelope, and session events rendered as the frames clients receive."""

from __future__ import annotations

import itertools
import time
from typing import Any

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


def status_name(value: int) -> str:
    return pb.ProcessStatus.Name(value).removeprefix("PROCESS_STATUS_") if value else ""


def close_reason_name(value: int) -> str:
    return pb.CloseReason.Name(value).removeprefix("CLOSE_REASON_") if value else ""


def role_name(value: int) -> str:
    return pb.ChatRole.Name(value).removeprefix("CHAT_ROLE_").lower()


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
        "parentProcessId": p.parent_process_id or None,
        "pendingCount": p.pending_count,
        "createdAt": p.created_at_ms,
    }


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
