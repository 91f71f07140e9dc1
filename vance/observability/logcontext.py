"""The ids a log line is about (session, process, turn), kept in contextvars by whoever knows
them: the gRPC server interceptor from the request (vance/authz.py), the worker per turn, the
gateway per frame. A logging filter copies them onto every record, with the current trace and
span ids when tracing is on."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

session_id: contextvars.ContextVar[str] = contextvars.ContextVar("log_session_id", default="")
process_id: contextvars.ContextVar[str] = contextvars.ContextVar("log_process_id", default="")
turn_id: contextvars.ContextVar[str] = contextvars.ContextVar("log_turn_id", default="")
# The current trace and span ids, set by vance/observability/tracing.py when tracing is on.
span_ids: Callable[[], tuple[str, str] | None] | None = None


def from_request(request: Any) -> None:
    """The session and process a gRPC request names (directly or in its `target`)."""
    if request is None:
        return
    for source in (request, getattr(request, "target", None)):
        if source is None:
            continue
        sid = getattr(source, "session_id", None)
        if sid and isinstance(sid, str):
            session_id.set(sid)
        pid = getattr(source, "process_id", None)
        if pid and isinstance(pid, str):
            process_id.set(pid)


def for_turn(session: str, process: str, turn: str) -> None:
    session_id.set(session)
    process_id.set(process)
    turn_id.set(turn)


class ContextFilter(logging.Filter):
    """Adds `service`, `ts` (ms, with zone) and the known ids to every record."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def filter(self, record: logging.LogRecord) -> bool:
        record.service = self.service
        record.ts = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        for name, var in (
            ("session_id", session_id),
            ("process_id", process_id),
            ("turn_id", turn_id),
        ):
            value = var.get()
            if value:
                setattr(record, name, value)
        if span_ids is not None:
            ids = span_ids()
            if ids is not None:
                record.trace_id, record.span_id = ids
        return True
