"""The SessionService servicer: thin, converts and delegates to Sessions."""

from __future__ import annotations

from typing import Any

from session_service import convert as sc
from session_service.sessions import Sessions
from vance.errors import grpc_errors
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc


class SessionServicer(session_pb2_grpc.SessionServiceServicer):
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    @grpc_errors
    async def Authenticate(self, request: spb.AuthenticateRequest, context: Any) -> spb.User:
        user = await self.sessions.authenticate(
            request.tenant_id, request.username, request.password
        )
        return sc.user_to_proto(user)

    @grpc_errors
    async def GetUser(self, request: spb.GetUserRequest, context: Any) -> spb.User:
        return sc.user_to_proto(await self.sessions.user(request.tenant_id, request.username))

    @grpc_errors
    async def CreateUser(self, request: spb.CreateUserRequest, context: Any) -> spb.User:
        user = await self.sessions.create_user(
            request.tenant_id, request.username, request.password, list(request.roles)
        )
        return sc.user_to_proto(user)

    @grpc_errors
    async def GetProject(self, request: spb.GetProjectRequest, context: Any) -> spb.Project:
        project = await self.sessions.project(request.tenant_id, request.project_id)
        return sc.project_to_proto(project)

    @grpc_errors
    async def CreateProject(self, request: spb.CreateProjectRequest, context: Any) -> spb.Project:
        project = await self.sessions.create_project(
            request.tenant_id,
            request.project_id,
            request.title,
            sc.kind_from_proto(request.kind),
        )
        return sc.project_to_proto(project)

    @grpc_errors
    async def CreateSession(self, request: spb.CreateSessionRequest, context: Any) -> spb.Session:
        session = await self.sessions.create_session(
            request.tenant_id,
            request.project_id,
            request.owner_user_id,
            profile=request.profile,
            autonomous=request.autonomous,
            chat_engine=request.chat_engine,
        )
        return sc.session_to_proto(session)

    @grpc_errors
    async def GetSession(self, request: spb.GetSessionRequest, context: Any) -> spb.Session:
        return sc.session_to_proto(
            await self.sessions.session(request.tenant_id, request.session_id)
        )

    @grpc_errors
    async def ListSessions(
        self, request: spb.ListSessionsRequest, context: Any
    ) -> spb.ListSessionsResponse:
        found = await self.sessions.list_sessions(
            request.tenant_id, request.project_id, request.owner_user_id
        )
        return spb.ListSessionsResponse(sessions=[sc.session_to_proto(s) for s in found])
