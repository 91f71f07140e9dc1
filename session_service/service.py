"""The SessionService servicer: thin, converts and delegates to Sessions."""

from __future__ import annotations

from typing import Protocol

import grpc

from session_service import protos as sc
from session_service.access.actor import is_foreign_hub
from session_service.domain.models import Session
from session_service.hub.home import Home
from session_service.hub.hub_rpcs import HubRpcs
from session_service.hub.user_inbox import UserInbox
from session_service.lifecycle.engine_rollup import RollupRpcs
from session_service.lifecycle.lifecycle_wiring import LifecycleServices
from session_service.lifecycle.replica_takeover import OwnershipRpcs
from session_service.registry.sessions import DEFAULT_CHAT_ENGINE, Sessions
from session_service.search.search_wiring import SearchServices
from session_service.settings.engine_settings_rpc import EngineSettingsRpcs
from session_service.settings.permissions import check_visible, user_may_write
from vance.errors import InvalidArgumentError, NotFoundError, PermissionDeniedError, grpc_errors
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc


class _SessionOp(Protocol):
    """The request messages that name a session and the caller acting on it."""

    @property
    def tenant_id(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def caller(self) -> spb.Caller: ...


class SessionServicer(
    EngineSettingsRpcs,
    RollupRpcs,
    OwnershipRpcs,
    HubRpcs,
    session_pb2_grpc.SessionServiceServicer,
    session_internal_pb2_grpc.SessionInternalServiceServicer,
):
    def __init__(
        self,
        sessions: Sessions,
        lifecycle: LifecycleServices,
        search: SearchServices,
        home: Home,
        inbox: UserInbox,
    ) -> None:
        self.home = home  # the hub RPCs (hub/hub_rpcs.py)
        self.inbox = inbox
        self.sessions = sessions
        self.lifecycle = lifecycle
        self.transitions = lifecycle.transitions
        self.search = search

    @grpc_errors
    async def Authenticate(
        self,
        request: sipb.AuthenticateRequest,
        context: grpc.aio.ServicerContext[sipb.AuthenticateRequest, spb.User],
    ) -> spb.User:
        user = await self.sessions.authenticate(
            request.tenant_id, request.username, request.password
        )
        await self.home.ensure(user.tenant_id, user.username)  # the hub exists after a login
        return sc.user_to_proto(user)

    @grpc_errors
    async def GetUser(
        self,
        request: spb.GetUserRequest,
        context: grpc.aio.ServicerContext[spb.GetUserRequest, spb.User],
    ) -> spb.User:
        return sc.user_to_proto(await self.sessions.user(request.tenant_id, request.username))

    @grpc_errors
    async def CreateUser(
        self,
        request: spb.CreateUserRequest,
        context: grpc.aio.ServicerContext[spb.CreateUserRequest, spb.User],
    ) -> spb.User:
        user = await self.sessions.create_user(
            request.tenant_id, request.username, request.password, list(request.roles)
        )
        return sc.user_to_proto(user)

    @grpc_errors
    async def GetProject(
        self,
        request: spb.GetProjectRequest,
        context: grpc.aio.ServicerContext[spb.GetProjectRequest, spb.Project],
    ) -> spb.Project:
        project = await self.sessions.project(request.tenant_id, request.project_id)
        return sc.project_to_proto(project)

    @grpc_errors
    async def CreateProject(
        self,
        request: spb.CreateProjectRequest,
        context: grpc.aio.ServicerContext[spb.CreateProjectRequest, spb.Project],
    ) -> spb.Project:
        project = await self.sessions.create_project(
            request.tenant_id,
            request.project_id,
            request.title,
            sc.kind_from_proto(request.kind),
            owner=request.owner_user_id,
            group=request.group,
        )
        return sc.project_to_proto(project)

    @grpc_errors
    async def CreateSession(
        self,
        request: spb.CreateSessionRequest,
        context: grpc.aio.ServicerContext[spb.CreateSessionRequest, spb.Session],
    ) -> spb.Session:
        if not request.project_id:
            raise InvalidArgumentError(
                "projectId is required", reason="project_required", field="project_id"
            )
        project = await self.sessions.project(request.tenant_id, request.project_id)
        if request.owner_user_id and is_foreign_hub(project, request.owner_user_id):
            raise PermissionDeniedError("this is another user's hub project", reason="hub_foreign")
        profile = request.profile or "default"
        # An autonomous (event-driven) session's bootstrap recipe is the trigger's, else the
        # `default` recipe; an interactive one's is its chat process's recipe.
        engine = "" if request.autonomous else request.chat_engine or DEFAULT_CHAT_ENGINE
        recipe = request.recipe or ("default" if request.autonomous else "")
        resolved = await self.transitions.resolve_lifecycle(
            request.tenant_id,
            request.project_id,
            recipe=recipe,
            engine=engine,
            profile=profile,
            caller=request.lifecycle,
        )
        session = await self.sessions.create_session(
            request.tenant_id,
            request.project_id,
            request.owner_user_id,
            profile=profile,
            autonomous=request.autonomous,
            chat_engine=request.chat_engine,
            recipe=request.recipe,
            options=sc.options_from_resolved(
                resolved,
                allow_multiple_clients=request.allow_multiple_clients,
                bound_connection_id=request.connection_id or None,
            ),
        )
        return sc.session_to_proto(session)

    @grpc_errors
    async def GetSession(
        self,
        request: spb.GetSessionRequest,
        context: grpc.aio.ServicerContext[spb.GetSessionRequest, spb.Session],
    ) -> spb.Session:
        session = await self.sessions.session(request.tenant_id, request.session_id)
        return sc.session_to_proto(await self.transitions.view(session))

    # ---- lifecycle (session_service/lifecycle/connection_binding.py, lifecycle/transitions.py,
    # lifecycle/archive.py, lifecycle/sweepers.py) ----

    @grpc_errors
    async def BindSession(
        self,
        request: spb.BindSessionRequest,
        context: grpc.aio.ServicerContext[spb.BindSessionRequest, spb.BindSessionResponse],
    ) -> spb.BindSessionResponse:
        if not request.connection_id:
            raise InvalidArgumentError("connection_id is required")
        result = await self.lifecycle.binding.bind(
            request.tenant_id,
            request.session_id,
            request.connection_id,
            sc.caller_from_proto(request.caller),
            takeover=request.takeover,
        )
        return spb.BindSessionResponse(
            session=sc.session_to_proto(result.session),
            bound=result.bound,
            resumed=result.resumed,
            previous_connection_id=result.previous_connection_id,
        )

    @grpc_errors
    async def Heartbeat(
        self,
        request: spb.HeartbeatRequest,
        context: grpc.aio.ServicerContext[spb.HeartbeatRequest, spb.HeartbeatResponse],
    ) -> spb.HeartbeatResponse:
        beat = await self.lifecycle.binding.heartbeat(
            request.session_id,
            request.connection_id,
            reclaim=request.reclaim,
            lease_ms=request.lease_ms,
        )
        return spb.HeartbeatResponse(
            ok=beat.ok, reclaimed=beat.reclaimed, reason=beat.reason, lease_ms=beat.lease_ms
        )

    @grpc_errors
    async def RenewBindLeases(
        self,
        request: sipb.RenewBindLeasesRequest,
        context: grpc.aio.ServicerContext[
            sipb.RenewBindLeasesRequest, sipb.RenewBindLeasesResponse
        ],
    ) -> sipb.RenewBindLeasesResponse:
        grants = await self.lifecycle.binding.renew(
            [(b.session_id, b.connection_id, b.lease_ms) for b in request.beats]
        )
        return sipb.RenewBindLeasesResponse(
            beats=[spb.HeartbeatResponse(ok=g > 0, lease_ms=g) for g in grants]
        )

    @grpc_errors
    async def BindRound(
        self,
        request: sipb.BindRoundRequest,
        context: grpc.aio.ServicerContext[sipb.BindRoundRequest, sipb.BindRoundResponse],
    ) -> sipb.BindRoundResponse:
        done = await self.lifecycle.binding.drops.round(
            request.replica_id, request.lease_ms, request.since_ms, request.applied_ms
        )
        return sipb.BindRoundResponse(
            lease_ms=done.lease_ms,
            drops=[sipb.BindDrop(drop_id=d.drop_id, session_id=d.session_id) for d in done.drops],
            read_at_ms=done.read_at_ms,
        )

    @grpc_errors
    async def ReleaseBind(
        self,
        request: spb.ReleaseBindRequest,
        context: grpc.aio.ServicerContext[spb.ReleaseBindRequest, spb.Session],
    ) -> spb.Session:
        session = await self.lifecycle.binding.release(
            request.session_id, request.connection_id, disconnect=request.disconnect
        )
        return sc.session_to_proto(session) if session is not None else spb.Session()

    @grpc_errors
    async def MonitorSession(
        self,
        request: spb.SessionOpRequest,
        context: grpc.aio.ServicerContext[spb.SessionOpRequest, spb.Session],
    ) -> spb.Session:
        session = await self.lifecycle.binding.monitor(
            request.tenant_id, request.session_id, sc.caller_from_proto(request.caller)
        )
        return sc.session_to_proto(session)

    async def _load(self, request: _SessionOp) -> Session:
        return await self.transitions.load(
            request.tenant_id, request.session_id, sc.caller_from_proto(request.caller)
        )

    @grpc_errors
    async def SuspendSession(
        self,
        request: spb.SuspendSessionRequest,
        context: grpc.aio.ServicerContext[spb.SuspendSessionRequest, spb.Session],
    ) -> spb.Session:
        cause = sc.suspend_cause_from_proto(request.cause)
        session = await self.transitions.suspend(await self._load(request), cause)
        return sc.session_to_proto(session)

    @grpc_errors
    async def ResumeSession(
        self,
        request: spb.SessionOpRequest,
        context: grpc.aio.ServicerContext[spb.SessionOpRequest, spb.Session],
    ) -> spb.Session:
        return sc.session_to_proto(await self.transitions.resume(await self._load(request)))

    @grpc_errors
    async def ExtendSession(
        self,
        request: spb.ExtendSessionRequest,
        context: grpc.aio.ServicerContext[spb.ExtendSessionRequest, spb.Session],
    ) -> spb.Session:
        session = await self.transitions.extend(
            await self._load(request),
            transition_at_ms=request.transition_at_ms,
            extend_by_ms=request.extend_by_ms,
        )
        return sc.session_to_proto(session)

    @grpc_errors
    async def ArchiveSession(
        self,
        request: spb.SessionOpRequest,
        context: grpc.aio.ServicerContext[spb.SessionOpRequest, spb.Session],
    ) -> spb.Session:
        return sc.session_to_proto(await self.lifecycle.archive.archive(await self._load(request)))

    @grpc_errors
    async def ReactivateSession(
        self,
        request: spb.SessionOpRequest,
        context: grpc.aio.ServicerContext[spb.SessionOpRequest, spb.Session],
    ) -> spb.Session:
        session = await self.lifecycle.archive.reactivate(
            await self._load(request), request.profile
        )
        return sc.session_to_proto(session)

    @grpc_errors
    async def DeleteSession(
        self,
        request: spb.SessionOpRequest,
        context: grpc.aio.ServicerContext[spb.SessionOpRequest, spb.DeleteSessionResponse],
    ) -> spb.DeleteSessionResponse:
        try:
            session = await self._load(request)
        except NotFoundError:
            return spb.DeleteSessionResponse(deleted=False)  # deleted before: nothing left
        return spb.DeleteSessionResponse(deleted=await self.lifecycle.archive.delete(session))

    @grpc_errors
    async def RunSweeps(
        self,
        request: sipb.RunSweepsRequest,
        context: grpc.aio.ServicerContext[sipb.RunSweepsRequest, sipb.RunSweepsResponse],
    ) -> sipb.RunSweepsResponse:
        only = frozenset(request.only_session_ids) or None
        now = request.now_ms or self.transitions.clock.now_ms()
        report = await self.lifecycle.sweepers.run_all(now, only)
        return sc.sweep_report_to_proto(report)

    @grpc_errors
    async def RestartForced(
        self,
        request: sipb.RestartForcedRequest,
        context: grpc.aio.ServicerContext[sipb.RestartForcedRequest, sipb.RunSweepsResponse],
    ) -> sipb.RunSweepsResponse:
        configured = self.lifecycle.config.auto_restart_forced
        report = await self.lifecycle.sweepers.restart_forced(
            max_concurrent=request.max_concurrent or configured.max_concurrent,
            delay_between_ms=(
                configured.delay_between_ms
                if request.delay_between_ms < 0
                else request.delay_between_ms
            ),
            only=frozenset(request.only_session_ids) or None,
        )
        return sc.sweep_report_to_proto(report)

    # ---- metadata and search ----

    @grpc_errors
    async def ListSessions(
        self,
        request: spb.ListSessionsRequest,
        context: grpc.aio.ServicerContext[spb.ListSessionsRequest, spb.ListSessionsResponse],
    ) -> spb.ListSessionsResponse:
        found = await self.search.search.list_sessions(
            request.tenant_id,
            sc.caller_from_proto(request.caller),
            sc.filter_from_proto(request),
            limit=request.limit,
        )
        return spb.ListSessionsResponse(sessions=[sc.session_to_proto(s) for s in found])

    @grpc_errors
    async def GetSettings(
        self,
        request: spb.GetSettingsRequest,
        context: grpc.aio.ServicerContext[spb.GetSettingsRequest, spb.Settings],
    ) -> spb.Settings:
        if request.project_id:
            project = await self.sessions.project(request.tenant_id, request.project_id)
            check_visible(project, sc.caller_from_proto(request.caller))
        return sc.settings_to_proto(
            await self.lifecycle.settings.view(request.tenant_id, request.project_id)
        )

    @grpc_errors
    async def UpdateSettings(
        self,
        request: spb.UpdateSettingsRequest,
        context: grpc.aio.ServicerContext[spb.UpdateSettingsRequest, spb.Settings],
    ) -> spb.Settings:
        actor, project = sc.caller_from_proto(request.caller), None
        if request.project_id:
            project = await self.sessions.project(request.tenant_id, request.project_id)
            check_visible(project, actor)
        view = await self.lifecycle.settings.update(
            request.tenant_id,
            request.project_id,
            actor,
            set_values=dict(request.set),
            unset=list(request.unset),
            user_write=user_may_write(project, actor, [*request.set, *request.unset]),
        )
        return sc.settings_to_proto(view)

    @grpc_errors
    async def UpdateMetadata(
        self,
        request: spb.UpdateMetadataRequest,
        context: grpc.aio.ServicerContext[spb.UpdateMetadataRequest, spb.Session],
    ) -> spb.Session:
        session = await self.search.metadata.update(
            request.tenant_id,
            request.session_id,
            sc.caller_from_proto(request.caller),
            sc.patch_from_proto(request),
        )
        return sc.session_to_proto(session)

    @grpc_errors
    async def SearchSessions(
        self,
        request: spb.SearchSessionsRequest,
        context: grpc.aio.ServicerContext[spb.SearchSessionsRequest, spb.SearchSessionsResponse],
    ) -> spb.SearchSessionsResponse:
        result = await self.search.search.search(
            request.tenant_id,
            sc.caller_from_proto(request.caller),
            request.query,
            sc.filter_from_proto(request),
            limit=request.limit,
        )
        return sc.search_to_proto(result)
