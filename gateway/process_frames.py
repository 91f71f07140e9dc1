"""Handlers of the `process-*` frames: each takes the connection and its validated data and
returns the reply data (docs/protocol.md, "Client frames")."""

from __future__ import annotations

from typing import Any

from gateway.binding import caller
from gateway.connection import Connection
from gateway.errors import GatewayError
from gateway.frames import chat_message_data, process_data, status_name
from gateway.inputs import CommandData, ListData, MessagesData, SteerData, Targeted, required
from vance.protoutil import dict_to_struct
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb


def bound_session(conn: Connection) -> str:
    if not conn.session_id:
        raise GatewayError(409, "no session is bound to this connection", "no_session")
    return conn.session_id


def target(conn: Connection, data: Targeted) -> ppb.ProcessRef:
    session_id = bound_session(conn)
    if data.named:
        return ppb.ProcessRef(
            process_id=data.process_id or "",
            session_id=session_id,
            process_name=data.process_name or "",
        )
    if not conn.chat_process_id:
        raise GatewayError(
            400, "this session has no chat process: name the target process", "target_required"
        )
    return ppb.ProcessRef(process_id=conn.chat_process_id, session_id=session_id)


_OUTCOMES = {v: k.removeprefix("DELIVERY_OUTCOME_") for k, v in pb.DeliveryOutcome.items()}


async def steer(conn: Connection, request: ppb.SteerRequest) -> ppb.SteerResponse:
    """On the gateway's steer stream (gateway/steer_stream.py): the unary call's reply or
    error, for less CPU on both ends; the unary call itself with tracing on."""
    steers = conn.clients.steers
    if steers is not None:
        return await steers.steer(request)
    return await conn.clients.processes.Steer(request)


async def process_steer(conn: Connection, data: SteerData) -> dict[str, Any]:
    ref = target(conn, data)
    content = required(data.content, "content")
    resp = await steer(
        conn,
        ppb.SteerRequest(
            target=ref,
            message=pb.SteerMessage(
                idempotency_key=data.idempotency_key or "",
                user_chat_input=pb.UserChatInput(
                    from_user=conn.principal.username, content=content, ask_id=data.ask_id or ""
                ),
            ),
        ),
    )
    return {
        "thinkProcessId": resp.process.id or ref.process_id or None,
        "processName": resp.process.name or ref.process_name or None,
        "status": status_name(resp.process.status) or None,
        "outcome": _OUTCOMES[resp.outcome],
        "reason": resp.reason or None,
        "messageId": resp.message_id or None,
        "duplicate": resp.duplicate,
    }


async def process_command(conn: Connection, data: CommandData) -> dict[str, Any]:
    """A client command (e.g. an Approve button) for a process; engines may act on it without a
    model turn."""
    ref = target(conn, data)
    resp = await steer(
        conn,
        ppb.SteerRequest(
            target=ref,
            message=pb.SteerMessage(
                idempotency_key=data.idempotency_key or "",
                external_command=pb.ExternalCommand(
                    command=required(data.command, "command"),
                    params=dict_to_struct(dict(data.params or {})),
                ),
            ),
        ),
    )
    return {
        "outcome": _OUTCOMES[resp.outcome],
        "reason": resp.reason or None,
        "messageId": resp.message_id or None,
    }


async def process_pause(conn: Connection, data: Targeted) -> dict[str, Any]:
    if not data.named:
        # ESC: pause what has something to interrupt in the whole session.
        resp = await conn.clients.processes.PauseSession(
            ppb.PauseSessionRequest(session_id=bound_session(conn))
        )
        return {"processes": [process_data(p) for p in resp.processes]}
    return process_data(await conn.clients.processes.Pause(target(conn, data)))


async def process_resume(conn: Connection, data: Targeted) -> dict[str, Any]:
    """Resumes the engine; in a SUSPENDED session the session first (seed 002 §5: its engines
    resume with it), else the sweeper would later archive or close a session whose engines
    run again."""
    ref = target(conn, data)
    op = spb.SessionOpRequest(
        tenant_id=conn.principal.tenant_id, session_id=ref.session_id, caller=caller(conn)
    )
    session = await conn.clients.sessions.GetSession(
        spb.GetSessionRequest(tenant_id=op.tenant_id, session_id=op.session_id)
    )
    if session.status == pb.SESSION_STATUS_SUSPENDED:
        await conn.clients.sessions.ResumeSession(op)
    return process_data(await conn.clients.processes.Resume(ref))


async def process_stop(conn: Connection, data: Targeted) -> dict[str, Any]:
    if not data.named:
        raise GatewayError(400, "name the process to stop", "target_required")
    return process_data(await conn.clients.processes.Stop(target(conn, data)))


async def process_list(conn: Connection, data: ListData) -> dict[str, Any]:
    resp = await conn.clients.processes.ListProcesses(
        ppb.ListProcessesRequest(
            session_id=bound_session(conn), include_terminated=data.include_terminated
        )
    )
    return {"processes": [process_data(p) for p in resp.processes]}


async def process_messages(conn: Connection, data: MessagesData) -> dict[str, Any]:
    ref = target(conn, data)
    if not ref.process_id:
        resolved = await conn.clients.processes.ListProcesses(
            ppb.ListProcessesRequest(session_id=ref.session_id, include_terminated=True)
        )
        match = [p for p in resolved.processes if p.name == ref.process_name]
        if not match:
            raise GatewayError(404, f"no process named {ref.process_name!r}", "process_not_found")
        ref = ppb.ProcessRef(process_id=match[0].id, session_id=ref.session_id)
    resp = await conn.clients.processes.ListChatMessages(
        ppb.ListChatMessagesRequest(
            process_id=ref.process_id, session_id=ref.session_id, limit=data.limit
        )
    )
    return {"messages": [chat_message_data(m) for m in resp.messages]}
