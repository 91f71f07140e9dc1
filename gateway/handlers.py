"""Frame handlers: each takes the connection and the frame data and returns the reply data."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from gateway.frames import chat_message_data, process_data, status_name
from vance.protoutil import dict_to_struct
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb

if TYPE_CHECKING:
    from gateway.ws import Connection

Handler = Callable[["Connection", dict[str, Any]], Awaitable[dict[str, Any]]]
HANDLERS: dict[str, Handler] = {}


class FrameError(Exception):
    def __init__(self, code: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


def handles(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[name] = fn
        return fn

    return register


def _str(data: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise FrameError(400, f"{key} is required", f"{key}_required")
        return ""
    if not isinstance(value, str):
        raise FrameError(400, f"{key} must be a string", f"bad_{key}")
    return value


def _bound(conn: Connection) -> str:
    if not conn.session_id:
        raise FrameError(409, "no session is bound to this connection", "no_session")
    return conn.session_id


def _target(conn: Connection, data: dict[str, Any]) -> ppb.ProcessRef:
    session_id = _bound(conn)
    pid = _str(data, "processId")
    name = _str(data, "processName")
    if pid or name:
        return ppb.ProcessRef(process_id=pid, session_id=session_id, process_name=name)
    if not conn.chat_process_id:
        raise FrameError(
            400, "this session has no chat process: name the target process", "target_required"
        )
    return ppb.ProcessRef(process_id=conn.chat_process_id, session_id=session_id)


_OUTCOMES = {v: k.removeprefix("DELIVERY_OUTCOME_") for k, v in pb.DeliveryOutcome.items()}


@handles("process-steer")
async def process_steer(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    target = _target(conn, data)
    content = _str(data, "content", required=True)
    resp = await conn.clients.processes.Steer(
        ppb.SteerRequest(
            target=target,
            message=pb.SteerMessage(
                idempotency_key=_str(data, "idempotencyKey"),
                user_chat_input=pb.UserChatInput(
                    from_user=conn.principal.username, content=content
                ),
            ),
        )
    )
    return {
        "thinkProcessId": resp.process.id or target.process_id or None,
        "processName": resp.process.name or target.process_name or None,
        "status": status_name(resp.process.status) or None,
        "outcome": _OUTCOMES[resp.outcome],
        "reason": resp.reason or None,
        "messageId": resp.message_id or None,
        "duplicate": resp.duplicate,
    }


@handles("process-command")
async def process_command(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    """A client command (e.g. an Approve button) for a process; engines may act on it without a
    model turn."""
    params = data.get("params") or {}
    if not isinstance(params, dict):
        raise FrameError(400, "params must be an object", "bad_params")
    target = _target(conn, data)
    resp = await conn.clients.processes.Steer(
        ppb.SteerRequest(
            target=target,
            message=pb.SteerMessage(
                idempotency_key=_str(data, "idempotencyKey"),
                external_command=pb.ExternalCommand(
                    command=_str(data, "command", required=True), params=dict_to_struct(params)
                ),
            ),
        )
    )
    return {
        "outcome": _OUTCOMES[resp.outcome],
        "reason": resp.reason or None,
        "messageId": resp.message_id or None,
    }


@handles("process-pause")
async def process_pause(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    if not data.get("processName") and not data.get("processId"):
        # ESC: pause what has something to interrupt in the whole session.
        resp = await conn.clients.processes.PauseSession(
            ppb.PauseSessionRequest(session_id=_bound(conn))
        )
        return {"processes": [process_data(p) for p in resp.processes]}
    return process_data(await conn.clients.processes.Pause(_target(conn, data)))


@handles("process-resume")
async def process_resume(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    return process_data(await conn.clients.processes.Resume(_target(conn, data)))


@handles("process-stop")
async def process_stop(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    if not data.get("processName") and not data.get("processId"):
        raise FrameError(400, "name the process to stop", "target_required")
    return process_data(await conn.clients.processes.Stop(_target(conn, data)))


@handles("process-list")
async def process_list(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    resp = await conn.clients.processes.ListProcesses(
        ppb.ListProcessesRequest(
            session_id=_bound(conn), include_terminated=bool(data.get("includeTerminated"))
        )
    )
    return {"processes": [process_data(p) for p in resp.processes]}


@handles("process-messages")
async def process_messages(conn: Connection, data: dict[str, Any]) -> dict[str, Any]:
    target = _target(conn, data)
    if not target.process_id:
        resolved = await conn.clients.processes.ListProcesses(
            ppb.ListProcessesRequest(session_id=target.session_id, include_terminated=True)
        )
        match = [p for p in resolved.processes if p.name == target.process_name]
        if not match:
            raise FrameError(404, f"no process named {target.process_name!r}", "process_not_found")
        target = ppb.ProcessRef(process_id=match[0].id, session_id=target.session_id)
    limit = data.get("limit", 0)
    if not isinstance(limit, int) or limit < 0:
        raise FrameError(400, "limit must be a non-negative integer", "bad_limit")
    resp = await conn.clients.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(
            process_id=target.process_id, session_id=target.session_id, limit=limit
        )
    )
    return {"messages": [chat_message_data(m) for m in resp.messages]}
