"""The hub RPCs of SessionService (home, hub sessions, projects, the user's inbox); mixed into
SessionServicer so service.py stays a thin list of the lifecycle and search RPCs."""

from __future__ import annotations

from typing import cast

import grpc

from session_service import protos as sc
from session_service.hub.home import HUB_ENGINE, HUB_RECIPE, Home
from session_service.hub.user_inbox import UserInbox, item_to_proto
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import session_pb2 as spb


class HubRpcs:
    home: Home
    inbox: UserInbox

    async def CreateSession(
        self,
        request: spb.CreateSessionRequest,
        context: grpc.aio.ServicerContext[spb.CreateSessionRequest, spb.Session],
    ) -> spb.Session:
        raise NotImplementedError  # SessionServicer's

    @grpc_errors
    async def EnsureHome(
        self,
        request: sipb.EnsureHomeRequest,
        context: grpc.aio.ServicerContext[sipb.EnsureHomeRequest, sipb.HomeInfo],
    ) -> sipb.HomeInfo:
        if not request.tenant_id or not request.username:
            raise InvalidArgumentError("tenant and username are required")
        project_id, created = await self.home.ensure(request.tenant_id, request.username)
        return sipb.HomeInfo(project_id=project_id, group="Home", created=created)

    @grpc_errors
    async def OpenHubSession(
        self,
        request: spb.OpenHubSessionRequest,
        context: grpc.aio.ServicerContext[spb.OpenHubSessionRequest, spb.BindSessionResponse],
    ) -> spb.BindSessionResponse:
        if not request.connection_id or not request.username:
            raise InvalidArgumentError("username and connection_id are required")
        project_id, _ = await self.home.ensure(request.tenant_id, request.username)
        found = await self.home.candidates_then_bind(
            request.tenant_id, request.username, request.connection_id, request.profile or "default"
        )
        if found is not None:
            session, resumed = found
            return spb.BindSessionResponse(
                session=sc.session_to_proto(session), bound=True, resumed=resumed
            )
        created = await self.CreateSession(
            spb.CreateSessionRequest(
                tenant_id=request.tenant_id,
                project_id=project_id,
                owner_user_id=request.username,
                profile=request.profile or "default",
                chat_engine=HUB_ENGINE,
                recipe=HUB_RECIPE,
                connection_id=request.connection_id,
            ),
            # The hub's open reuses CreateSession's whole path; its context serves both.
            cast("grpc.aio.ServicerContext[spb.CreateSessionRequest, spb.Session]", context),
        )
        return spb.BindSessionResponse(session=created, bound=True)

    @grpc_errors
    async def ListProjects(
        self,
        request: spb.ListProjectsRequest,
        context: grpc.aio.ServicerContext[spb.ListProjectsRequest, spb.ListProjectsResponse],
    ) -> spb.ListProjectsResponse:
        found = await self.home.list_projects(
            request.tenant_id,
            sc.caller_from_proto(request.caller),
            request.kind,
            include_archived=request.include_archived,
        )
        return spb.ListProjectsResponse(projects=[sc.project_to_proto(p) for p in found])

    @grpc_errors
    async def DeleteProject(
        self,
        request: spb.ProjectOpRequest,
        context: grpc.aio.ServicerContext[spb.ProjectOpRequest, spb.DeleteProjectResponse],
    ) -> spb.DeleteProjectResponse:
        deleted = await self.home.delete_project(
            request.tenant_id, request.project_id, sc.caller_from_proto(request.caller)
        )
        return spb.DeleteProjectResponse(deleted=deleted)

    @grpc_errors
    async def ArchiveProject(
        self,
        request: spb.ProjectOpRequest,
        context: grpc.aio.ServicerContext[spb.ProjectOpRequest, spb.Project],
    ) -> spb.Project:
        project = await self.home.archive_project(
            request.tenant_id, request.project_id, sc.caller_from_proto(request.caller)
        )
        return sc.project_to_proto(project)

    @grpc_errors
    async def GetUserSetting(
        self,
        request: spb.GetUserSettingRequest,
        context: grpc.aio.ServicerContext[spb.GetUserSettingRequest, spb.UserSetting],
    ) -> spb.UserSetting:
        value = await self.home.user_setting(request.tenant_id, request.username, request.key)
        return spb.UserSetting(key=request.key, value=value)

    @grpc_errors
    async def AddInboxItem(
        self,
        request: spb.InboxItem,
        context: grpc.aio.ServicerContext[spb.InboxItem, spb.InboxItem],
    ) -> spb.InboxItem:
        return item_to_proto(await self.inbox.add(request))

    @grpc_errors
    async def ListInboxItems(
        self,
        request: spb.ListInboxItemsRequest,
        context: grpc.aio.ServicerContext[spb.ListInboxItemsRequest, spb.ListInboxItemsResponse],
    ) -> spb.ListInboxItemsResponse:
        docs = await self.inbox.list(
            request.tenant_id, request.user_id, unread_only=request.unread_only
        )
        return spb.ListInboxItemsResponse(items=[item_to_proto(d) for d in docs])

    @grpc_errors
    async def GetInboxItem(
        self,
        request: spb.InboxItemRef,
        context: grpc.aio.ServicerContext[spb.InboxItemRef, spb.InboxItem],
    ) -> spb.InboxItem:
        return item_to_proto(await self.inbox.get(request))

    @grpc_errors
    async def MarkInboxItem(
        self,
        request: spb.MarkInboxItemRequest,
        context: grpc.aio.ServicerContext[spb.MarkInboxItemRequest, spb.InboxItem],
    ) -> spb.InboxItem:
        return item_to_proto(await self.inbox.mark(request.ref, request.read))

    @grpc_errors
    async def AnswerInboxItem(
        self,
        request: spb.AnswerInboxItemRequest,
        context: grpc.aio.ServicerContext[spb.AnswerInboxItemRequest, spb.InboxItem],
    ) -> spb.InboxItem:
        return item_to_proto(await self.inbox.answer(request.ref, request.answer))
