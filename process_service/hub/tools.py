"""The hub tools (`@organizational`, plus the `@hub` ones the Eddie engine calls itself): Eddie
creates, opens and archives the user's projects, observes and commands their processes, speaks
to them on the user's behalf and writes to the user's inbox. Everything acts as the calling
process's owner: a process of another user is as unknown as a missing one."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import grpc
from pymongo.asynchronous.database import AsyncDatabase

from process_service.hub.names import ProjectNames
from process_service.hub.tool_models import (
    CommandArgs,
    Commanded,
    CreateArgs,
    ForwardArgs,
    HubContext,
    InboxForwarded,
    KindArgs,
    NamedArgs,
    ObserveArgs,
    Observing,
    OpenArgs,
    ProjectArchived,
    ProjectCreated,
    ProjectEntry,
    ProjectList,
    ProjectOpened,
    ProjectSession,
    SessionProcess,
    SwitchTo,
    SwitchToArgs,
    VoiceRulesArgs,
    VoiceRulesStored,
)
from process_service.lifecycle.observations import DEFAULT_MODE, Observations
from process_service.lifecycle.processes import Processes
from process_service.process_model import Process
from process_service.runtime.inbox import Inbox
from process_service.tool_args import (
    ToolError,
    ToolResult,
    parse_args,
)
from process_service.tool_args import rpc_details as _details
from vance.domain import DeliveryOutcome, UserChatInput
from vance.errors import VanceError
from vance.internal.v1 import session_internal_pb2_grpc
from vance.json_types import JsonObject
from vance.profiles import capabilities
from vance.store import Document
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

logger = logging.getLogger(__name__)

# (session ids, notice type, the notice's data as sent to the clients)
Publish = Callable[[list[str], str, JsonObject], Awaitable[None]]

WORKER_PROFILE = "eddie"  # a worker addressed through Eddie: no client tools (vance/profiles.py)
TENANT_LEVEL = "_tenant"


def _caller(process: Process) -> spb.Caller:
    return spb.Caller(user_id=process.owner_user_id)


def _kind(p: spb.Project) -> str:
    return pb.ProjectKind.Name(p.kind).removeprefix("PROJECT_KIND_") if p.kind else "NORMAL"


class HubTools:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        processes: Processes,
        inbox: Inbox,
        observations: Observations,
        sessions: session_pb2_grpc.SessionServiceAsyncStub,
        sessions_internal: session_internal_pb2_grpc.SessionInternalServiceAsyncStub,
        publish: Publish,
    ) -> None:
        self._created = db["hub_creations"]
        self._voice = db["voice_rules"]
        self._processes = processes
        self._inbox = inbox
        self._observations = observations
        self._sessions = sessions
        self._sessions_internal = sessions_internal  # AddInboxItem
        self._publish = publish  # (session ids, notice type, data) -> None
        self.names: ProjectNames | None = None  # conflict protection, set at wiring

    async def invoke(
        self, tool: str, caller: Process, args: JsonObject, key: str, profile: str = ""
    ) -> ToolResult:
        if tool == "hub_switch_to" and not capabilities(profile).can_mediate:
            # The engine checks this before it calls; a call that got here another way is
            # refused the same (seed 001 §8.5.5).
            raise ToolError(f"profile {profile or 'default'!r} cannot mediate")
        handler = getattr(self, f"_{tool}")
        try:
            result: ToolResult = await handler(caller, args, key)
        except grpc.aio.AioRpcError as exc:
            raise ToolError(_details(exc)) from exc
        return result

    async def owned(self, caller: Process, process_id: str) -> Process:
        try:
            found = await self._processes.get(process_id)
        except VanceError as exc:
            raise ToolError(f"no process {process_id!r}") from exc
        if found.owner_user_id != caller.owner_user_id or found.tenant_id != caller.tenant_id:
            raise ToolError(f"no process {process_id!r}")
        return found

    async def _project(self, caller: Process, name: str) -> spb.Project:
        found = await self._sessions.ListProjects(
            spb.ListProjectsRequest(tenant_id=caller.tenant_id, caller=_caller(caller), kind="ALL")
        )
        for project in found.projects:
            if project.project_id == name:
                result: spb.Project = project
                return result
        raise ToolError(f"no project named {name!r}; see project_list")

    async def _project_create(self, caller: Process, args: JsonObject, key: str) -> ProjectCreated:
        done = await self._created.find_one({"_id": key})
        if done is not None:
            return ProjectCreated.model_validate(done["result"])  # a redone turn: created once
        parsed = parse_args(CreateArgs, args)
        name, tenant = parsed.name, caller.tenant_id
        user, mode = caller.owner_user_id, parsed.channel_mode or DEFAULT_MODE
        if self.names is not None:  # one hub of the user wins a name (hub_names.py)
            await self.names.claim(caller, name, key)
        try:
            await self._sessions.CreateProject(
                spb.CreateProjectRequest(
                    tenant_id=tenant,
                    project_id=name,
                    title=parsed.title or name,
                    kind=pb.PROJECT_KIND_NORMAL,
                    owner_user_id=user,
                )
            )
        except grpc.aio.AioRpcError as exc:
            if self.names is not None:
                await self.names.release(caller, name, key)
            if exc.code() == grpc.StatusCode.ALREADY_EXISTS:
                raise ToolError(
                    f"a project named {name!r} exists already; open it with project_open or "
                    "pick another name"
                ) from exc
            raise
        session = await self._sessions.CreateSession(
            spb.CreateSessionRequest(
                tenant_id=tenant,
                project_id=name,
                owner_user_id=user,
                profile=WORKER_PROFILE,
                recipe=parsed.recipe,
            )
        )
        chat = await self._processes.get(session.chat_process_id)
        await self._observations.observe(chat, caller, mode, name, started=True)
        steer = parsed.steer_content
        if steer:
            await self.say(caller, chat, steer, f"{key}:steer")
        result = ProjectCreated(
            project=name,
            kind="NORMAL",
            session_id=session.session_id,
            chat_process_id=session.chat_process_id,
            chat_engine=session.chat_engine,
            channel_mode=mode,
            steered=bool(steer),
        )
        await self._created.insert_one({"_id": key, "result": result.to_json()})
        if self.names is not None:
            await self.names.created(caller, name, result)
        return result

    async def say(
        self,
        caller: Process,
        target: Process,
        text: str,
        key: str,
        *,
        forwarded: dict[str, str] | None = None,
        ask_id: str = "",
    ) -> str:
        """The user's words, sent by Eddie: USER_CHAT_INPUT from the user, Eddie as sender
        (and, for project_steer and answers, `forwardedBy` and the question answered)."""
        result = await self._inbox.steer(
            target.id,
            "",
            "",
            UserChatInput(
                content=text,
                idempotency_key=key,
                sender_process_id=caller.id,
                from_user=caller.owner_user_id,
                forwarded_by=forwarded or {},
                ask_id=ask_id,
            ),
        )
        if result.outcome is DeliveryOutcome.REJECTED:
            raise ToolError(result.reason)
        return result.outcome.value

    async def _project_list(self, caller: Process, args: JsonObject, key: str) -> ProjectList:
        found = await self._sessions.ListProjects(
            spb.ListProjectsRequest(
                tenant_id=caller.tenant_id,
                caller=_caller(caller),
                kind=parse_args(KindArgs, args).kind or "NORMAL",
            )
        )
        return ProjectList(
            projects=[
                ProjectEntry(name=p.project_id, title=p.title, kind=_kind(p), archived=p.archived)
                for p in found.projects
            ]
        )

    async def _project_open(self, caller: Process, args: JsonObject, key: str) -> ProjectOpened:
        parsed = parse_args(OpenArgs, args)
        return await self.project_open(caller, parsed.name, parsed.channel_mode)

    async def project_open(
        self, caller: Process, name: str, channel_mode: str = ""
    ) -> ProjectOpened:
        """The project's sessions, newest first, with the hub observing the newest one's chat
        (in `channel_mode`, else the mode it observes in already, else DEFAULT_MODE)."""
        project = await self._project(caller, name)
        listed = await self._sessions.ListSessions(
            spb.ListSessionsRequest(
                tenant_id=caller.tenant_id,
                project_id=project.project_id,
                caller=_caller(caller),
            )
        )
        sessions = []
        for s in sorted(listed.sessions, key=lambda s: s.last_activity_at_ms, reverse=True):
            procs = await self._processes.in_session(s.session_id, include_terminated=False)
            sessions.append(
                ProjectSession(
                    session_id=s.session_id,
                    chat_process_id=s.chat_process_id or None,
                    processes=[
                        SessionProcess(id=p.id, name=p.name, engine=p.engine, status=p.status.value)
                        for p in procs
                    ],
                )
            )
        connected, mode = None, ""
        if sessions and sessions[0].chat_process_id:
            chat = await self.owned(caller, sessions[0].chat_process_id)
            observers = await self._observations.observers(chat.id)
            mine = observers.get(caller.id)
            mode = channel_mode or str((mine or {}).get("mode") or DEFAULT_MODE)
            if mine is None or mine.get("mode") != mode:
                await self._observations.observe(chat, caller, mode, project.project_id)
            connected = chat.id
        return ProjectOpened(
            project=project.project_id,
            title=project.title,
            kind=_kind(project),
            archived=project.archived,
            sessions=sessions,
            connected_to=connected,
            channel_mode=mode or None,
        )

    async def _project_archive(
        self, caller: Process, args: JsonObject, key: str
    ) -> ProjectArchived:
        project = await self._sessions.ArchiveProject(
            spb.ProjectOpRequest(
                tenant_id=caller.tenant_id,
                project_id=parse_args(NamedArgs, args).name,
                caller=_caller(caller),
            )
        )
        return ProjectArchived(project=project.project_id, archived=True)

    async def _process_observe(self, caller: Process, args: JsonObject, key: str) -> Observing:
        parsed = parse_args(ObserveArgs, args)
        mode = parsed.channel_mode
        target = await self.owned(caller, parsed.process_id)
        await self._observations.observe(target, caller, mode, target.project_id)
        return Observing(process_id=target.id, channel_mode=mode)

    async def _process_command(self, caller: Process, args: JsonObject, key: str) -> Commanded:
        parsed = parse_args(CommandArgs, args)
        command = parsed.command.lower()
        target = await self.owned(caller, parsed.process_id)
        try:
            if command == "stop":
                doc = await self._processes.stop(target, stopped_by=caller.id)
            elif command == "pause":
                doc = await self._processes.pause(target)
            elif command == "resume":
                doc = await self._processes.resume(target)
            else:
                raise ToolError("command must be stop, pause or resume")
        except VanceError as exc:
            raise ToolError(exc.message) from exc
        return Commanded(process_id=doc.id, status=doc.status.value)

    async def _inbox_forward_to_user(
        self, caller: Process, args: JsonObject, key: str
    ) -> InboxForwarded:
        parsed = parse_args(ForwardArgs, args)
        item = await self._sessions_internal.AddInboxItem(
            spb.InboxItem(
                tenant_id=caller.tenant_id,
                user_id=caller.owner_user_id,
                title=parsed.title,
                body=parsed.body,
                source_process_id=caller.id,
                source_session_id=caller.session_id,
                idempotency_key=key,
            )
        )
        return InboxForwarded(id=item.id, title=item.title)

    async def _hub_switch_to(self, caller: Process, args: JsonObject, key: str) -> SwitchTo:
        parsed = parse_args(SwitchToArgs, args)
        target = parsed.target
        try:
            doc = await self.owned(caller, target)
        except ToolError:
            opened = await self.project_open(caller, target)
            chat = next((s.chat_process_id for s in opened.sessions if s.chat_process_id), "")
            if not chat:
                raise ToolError(f"project {target!r} has no open session to switch to") from None
            doc = await self.owned(caller, chat)
        data = SwitchTo(
            target_session_id=doc.session_id,
            target_project_id=doc.project_id,
            target_process_name=doc.name,
            voice_announcement=parsed.voice_announcement or None,
        )
        await self._publish([caller.session_id], "switch-to", data.to_json())
        return data

    async def _hub_context(self, caller: Process, args: JsonObject, key: str) -> HubContext:
        """Language: the process's `chat.language`, else the project's (the hub project for
        Eddie) over the tenant's settings, else en. Voice rules: the hub's document, then the
        tenant's; none stored means the engine's bundled rules."""
        tenant, project = caller.tenant_id, caller.project_id
        language = str(caller.params.get("chat.language") or "")
        if not language:
            settings = await self._sessions.GetSettings(
                spb.GetSettingsRequest(tenant_id=tenant, project_id=project)
            )
            language = settings.effective.get("chat.language", "") or "en"
        out = HubContext(language=language, user_project=project)
        for level in (project, TENANT_LEVEL):
            doc = await self._voice.find_one({"_id": f"{tenant}:{level}:{language}"})
            if doc is not None:
                out.voice_rules = str(doc["rules"])
                out.voice_rules_source = "hub" if level == project else "tenant"
                break
        return out

    async def _hub_voice_rules_store(
        self, caller: Process, args: JsonObject, key: str
    ) -> VoiceRulesStored:
        """Rules Eddie bootstrapped for a language nobody had rules for: the tenant level, an
        ordinary stored document an admin may overwrite; existing rules are never replaced."""
        parsed = parse_args(VoiceRulesArgs, args)
        language, rules = parsed.language.lower(), parsed.rules
        doc_id = f"{caller.tenant_id}:{TENANT_LEVEL}:{language}"
        result = await self._voice.update_one(
            {"_id": doc_id},
            {"$setOnInsert": {"rules": rules, "language": language, "source": "bootstrap"}},
            upsert=True,
        )
        return VoiceRulesStored(language=language, stored=result.upserted_id is not None)
