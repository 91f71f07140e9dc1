"""The WebSocket frame table: frame type -> (declared data model, handler, reply type).

This is the one list of frames the gateway handles; a frame's `data` is validated against its
model before the handler runs, and every failure becomes an error frame through
gateway/errors.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from gateway import client_tools, plan_frames, process_frames, session_frames, socket_frames
from gateway.connection import Connection
from gateway.errors import describe
from gateway.frames import error_frame, frame
from gateway.inputs import (
    CommandData,
    CreateData,
    Envelope,
    ListData,
    MessagesData,
    MonitorData,
    NoData,
    PingData,
    PlanDecisionData,
    ResumeData,
    SteerData,
    Targeted,
)


@dataclass(frozen=True)
class Route:
    model: type[BaseModel]
    handler: Callable[[Connection, Any], Awaitable[dict[str, Any]]]
    reply_type: str = ""  # "" = the request's type


ROUTES: dict[str, Route] = {
    "ping": Route(PingData, socket_frames.ping, "pong"),
    "logout": Route(NoData, socket_frames.logout),
    "session-create": Route(CreateData, session_frames.session_create),
    "session-resume": Route(ResumeData, session_frames.session_resume),
    "session-monitor": Route(MonitorData, session_frames.session_monitor),
    "session-unbind": Route(NoData, session_frames.session_unbind),
    "process-steer": Route(SteerData, process_frames.process_steer),
    "process-command": Route(CommandData, process_frames.process_command),
    "process-pause": Route(Targeted, process_frames.process_pause),
    "process-resume": Route(Targeted, process_frames.process_resume),
    "process-stop": Route(Targeted, process_frames.process_stop),
    "process-list": Route(ListData, process_frames.process_list),
    "process-messages": Route(MessagesData, process_frames.process_messages),
    "plan-decision": Route(PlanDecisionData, plan_frames.plan_decision),
    "plan-get": Route(Targeted, plan_frames.plan_get),
    "client-tool-register": Route(client_tools.RegisterData, client_tools.client_tool_register),
    "client-tool-result": Route(client_tools.ResultData, client_tools.client_tool_result),
}


async def dispatch(conn: Connection, env: Envelope) -> None:
    """Validates, runs the handler, and sends its reply or one error frame (never both)."""
    route = ROUTES.get(env.type)
    if route is None:
        await conn.send(
            error_frame(
                400, f"unknown frame type {env.type[:64]!r}", "unknown_frame", reply_to=env.id
            )
        )
        return
    try:
        data = route.model.model_validate(env.data)
        reply = await route.handler(conn, data)
    except Exception as exc:  # describe() logs what it does not expect
        await conn.send(error_frame_for(exc, reply_to=env.id))
        return
    await conn.send(frame(route.reply_type or env.type, reply, reply_to=env.id))


def error_frame_for(exc: BaseException, *, reply_to: str | None) -> dict[str, Any]:
    info = describe(exc)
    return frame("error", info.body(), reply_to=reply_to)
