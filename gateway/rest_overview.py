"""REST route for what a session row shows beyond the session itself (seed 002 §13): its
engines with their statuses (a SUSPENDED session's card counts them; a closed one says why)
and its first user message (the title until one is set or suggested).

One call per row, made by the web client only for rows that need it; the chat's first
messages are read by number (`through`), so a long chat costs no more than a short one."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from gateway.errors import GatewayError
from gateway.frames import close_detail, close_reason_name, status_name
from gateway.outputs import CLOSE_DETAIL
from gateway.rest_deps import PathId, clients, principal
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import session_pb2 as spb

router = APIRouter(tags=["sessions"])

# The welcome comes first; the user's first message is among the next few.
FIRST_MESSAGES = 8
TITLE_CHARS = 120


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class EngineView(_Camel):
    process_id: str
    process_name: str
    engine: str
    status: str
    close_reason: str | None = Field(None, description="why it closed; null unless CLOSED")
    close_detail: str | None = Field(None, description=CLOSE_DETAIL)


class OverviewView(_Camel):
    session_id: str
    engines: list[EngineView]
    first_user_message: str | None = Field(
        None, description=f"the first {TITLE_CHARS} characters; null: the user said nothing yet"
    )


@router.get("/brain/{tenant}/session/{session_id}/overview", response_model=OverviewView)
async def session_overview(request: Request, tenant: PathId, session_id: PathId) -> OverviewView:
    p = await principal(request, tenant)
    c = clients(request)
    s = await c.sessions.GetSession(spb.GetSessionRequest(tenant_id=tenant, session_id=session_id))
    if s.owner_user_id != p.username and not p.is_admin:
        raise GatewayError(403, "the session belongs to another user", "session_foreign")
    listed = await c.processes.ListProcesses(
        ppb.ListProcessesRequest(session_id=session_id, include_terminated=True)
    )
    first: str | None = None
    if s.chat_process_id:
        chat = await c.processes.ListChatMessages(
            ppb.ListChatMessagesRequest(
                session_id=session_id, process_id=s.chat_process_id, through=FIRST_MESSAGES
            )
        )
        said = [m.content for m in chat.messages if m.role == pb.CHAT_ROLE_USER and m.content]
        first = " ".join(said[0].split())[:TITLE_CHARS] if said else None
    return OverviewView(
        session_id=session_id,
        engines=[
            EngineView(
                process_id=x.id,
                process_name=x.name,
                engine=x.engine,
                status=status_name(x.status),
                close_reason=close_reason_name(x.close_reason) or None,
                close_detail=close_detail(x),
            )
            for x in listed.processes
        ],
        first_user_message=first,
    )
