"""The process tools: what an engine may do to the processes of its session.

Every failure is a ToolError, which the host turns into an ERROR result the model can act on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import grpc

from process_service.hub.peer_specs import PEER_TOOL_NAMES, PEER_TOOLS
from process_service.hub.tool_specs import HUB_TOOL_NAMES, HUB_TOOLS
from process_service.knowledge.tools import KNOWLEDGE_TOOL_NAMES, KNOWLEDGE_TOOLS
from process_service.lifecycle.processes import Processes
from process_service.process_model import Process
from process_service.runtime.inbox import Inbox
from process_service.tool_args import (
    JsonResult,
    SpawnResult,
    ToolError,
    ToolResult,
    parse_args,
    rpc_details,
)
from process_service.tool_specs import PROCESS_TOOLS
from process_service.tools.delegate import Delegation
from process_service.tools.how_do_i import HowDoI, bundled_manuals
from process_service.tools.models import (
    HowDoIAnswer,
    HowDoIArgs,
    ListArgs,
    Manual,
    ManualEntry,
    ManualList,
    NamedArgs,
    Paused,
    ProcessList,
    ProcessSummary,
    RecipeDescribed,
    RecipeEntry,
    RecipeList,
    Section,
    SpawnArgs,
    SteerArgs,
    Steered,
    Stopped,
)
from process_service.tools.slart import GeneratedRecipes
from process_service.tools.talk_specs import (
    PLAN_TOOL_NAMES,
    PLAN_TOOLS,
    TALK_TOOL_NAMES,
    TALK_TOOLS,
)
from process_service.user_work.specs import USER_WORK_TOOL_NAMES, USER_WORK_TOOLS
from vance.domain import DeliveryOutcome, ProcessStatus, ThinkProcess, UserChatInput
from vance.errors import VanceError
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc
from vance.json_types import JsonObject
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc

if TYPE_CHECKING:
    from process_service.hub.peers import HubPeers
    from process_service.hub.talk import HubTalk
    from process_service.hub.tools import HubTools
    from process_service.knowledge.tools import KnowledgeTools
    from process_service.lifecycle.plans import Plans
    from process_service.user_work.host import UserWork

logger = logging.getLogger(__name__)


# How long process_create waits for its child to leave INIT before it answers.
STARTED_WAIT_S = 3.0

_details = rpc_details


# Tools whose effect outlives the chat (label `@persistent`: a stored recipe, a project, a
# message in another session or in the user's inbox). A successful call is a side effect that
# keeps the session from counting as abandoned (session_service/lifecycle/abandoned.py).
PERSISTENT_TOOL_NAMES = frozenset(
    t["name"]
    for t in (
        PROCESS_TOOLS
        + HUB_TOOLS
        + USER_WORK_TOOLS
        + TALK_TOOLS
        + PLAN_TOOLS
        + PEER_TOOLS
        + KNOWLEDGE_TOOLS
    )
    if "@persistent" in t["labels"]
)


class ProcessTools:
    def __init__(
        self,
        processes: Processes,
        inbox: Inbox,
        recipes: recipe_pb2_grpc.RecipeServiceAsyncStub,
        recipes_internal: recipe_internal_pb2_grpc.RecipeInternalServiceAsyncStub,
        engines_available: Callable[[], set[str]],
        *,
        hub: HubTools | None = None,
        work: UserWork | None = None,
        talk: HubTalk | None = None,
        plans: Plans | None = None,
        peers: HubPeers | None = None,
        knowledge: KnowledgeTools | None = None,
    ) -> None:
        self._processes = processes
        self._inbox = inbox
        self._recipes = recipes
        self._recipes_internal = recipes_internal  # ApplyRecipe, the catalog, the selector
        self._engines_available = engines_available
        self.hub = hub  # the hub tools (hub_tools.py)
        self.work = work  # the user's own tools (user_work/)
        self.talk = talk  # talking to projects (hub_talk.py)
        self.plans = plans  # plan mode (plans.py)
        self.peers = peers  # the hubs' activity and peer events (hub_peers.py)
        self.knowledge = knowledge  # memory and RAG (knowledge/)
        # process_create_delegate spawns through self.spawn, the path process_create takes.
        self._delegation = Delegation(self.spawn, processes, recipes_internal, engines_available)
        self._generated = GeneratedRecipes(recipes, recipes_internal, engines_available)
        self._howdoi = HowDoI(manuals=bundled_manuals(recipes))

    async def invoke(
        self, tool: str, args: JsonObject, caller_id: str, key: str, profile: str
    ) -> ToolResult:
        try:
            caller = await self._processes.get(caller_id)
        except VanceError as exc:
            raise ToolError(f"unknown calling process: {exc.message}") from exc
        result = await self._dispatch(tool, caller, args, key, profile)
        if tool in PERSISTENT_TOOL_NAMES:
            await self._processes.count_persistent_call(caller_id)
        if self.peers is not None:  # a hub's activity (hub_peers.py)
            result = await self.peers.after_tool(tool, caller, args, result, key)
        return result

    async def _dispatch(
        self, tool: str, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        if self.peers is not None and tool in PEER_TOOL_NAMES:
            return await self.peers.invoke(tool, caller, args, key)
        if self.hub is not None and tool in HUB_TOOL_NAMES:
            return await self.hub.invoke(tool, caller, args, key, profile)
        if self.work is not None and tool in USER_WORK_TOOL_NAMES:
            return await self.work.invoke(tool, caller, args, key)
        if self.knowledge is not None and tool in KNOWLEDGE_TOOL_NAMES:
            return await self.knowledge.invoke(tool, caller, args, key)
        if self.talk is not None and tool in TALK_TOOL_NAMES:
            return await self.talk.invoke(tool, caller, args, key)
        if self.plans is not None and tool in PLAN_TOOL_NAMES:
            try:
                return JsonResult(body=await self.plans.invoke(tool, caller, args, key))
            except VanceError as exc:
                raise ToolError(exc.message) from exc
        handler = getattr(self, f"_{tool}", None)
        if handler is None:
            raise ToolError(f"process_service does not host {tool!r}")
        try:
            result: ToolResult = await handler(caller, args, key, profile)
        except VanceError as exc:
            raise ToolError(exc.message) from exc
        return result

    async def _target(self, caller: Process, name: str) -> Process:
        pid = await self._inbox.resolve("", caller.session_id, name)
        if pid is None:
            raise ToolError(f"no process named {name!r} in this session; see process_list")
        return await self._processes.get(pid)

    async def _process_create(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        child = await self.spawn(caller, args, key, profile)
        if child.status is ProcessStatus.INIT:
            # The caller learns what the child reached once a lane took it (RUNNING, or already
            # IDLE/BLOCKED/CLOSED), not the INIT of its creation; bounded, since the child waits
            # for a free worker slot (INIT is reported when none came in time).
            child = await self._processes.started(child.id, STARTED_WAIT_S)
        return SpawnResult.of(child)

    async def _process_create_delegate(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        return JsonResult(body=await self._delegation.run(caller, args, key, profile))

    async def _slart_context(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        return await self._generated.context(caller)

    async def _slart_store_recipe(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        return await self._generated.store(caller, args)

    async def spawn(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ThinkProcess:
        """A child of the caller from a recipe (or an engine), started at once; `key` makes a
        repeated call (a redone turn) return the same child."""
        parsed = parse_args(SpawnArgs, args)
        recipe, engine = parsed.recipe, parsed.engine
        if not recipe and not engine:
            recipe = "default"
        try:
            applied = await self._recipes_internal.ApplyRecipe(
                ripb.ApplyRecipeRequest(
                    tenant_id=caller.tenant_id,
                    project_id=caller.project_id,
                    recipe=recipe,
                    engine=engine,
                    profile=profile,
                    caller_params=dict_to_struct(parsed.params),
                )
            )
        except Exception as exc:
            details = _details(exc)
            raise ToolError(f"recipe {recipe or engine!r} cannot be applied: {details}") from exc
        if applied.engine not in self._engines_available():
            raise ToolError(
                f"no engine worker runs {applied.engine!r} now; pick another recipe "
                "(recipe_list) or try later"
            )
        spec = ThinkProcess(
            id="",
            tenant_id=caller.tenant_id,
            project_id=caller.project_id,
            session_id=caller.session_id,
            name=parsed.name,
            title=parsed.title or parsed.name,
            goal=parsed.goal,
            engine=applied.engine,
            recipe_name=applied.recipe_name,
            parent_process_id=caller.id,
            owner_user_id=caller.owner_user_id,
            recipe_snapshot={**struct_to_dict(applied.snapshot), "profile": profile},
            params=struct_to_dict(applied.params),
        )
        child = await self._processes.create(
            spec, idempotency_key=key, start=True, spawned_by=caller
        )
        steer = parsed.steer_content
        if steer:
            await self._inbox.steer(
                child.id,
                "",
                "",
                UserChatInput(
                    content=steer,
                    idempotency_key=f"{key}:steer",
                    sender_process_id=caller.id,
                    from_user=f"process:{caller.name}",
                ),
            )
        return child

    async def _process_steer(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        parsed = parse_args(SteerArgs, args)
        target = await self._target(caller, parsed.name)
        if target.id == caller.id:
            raise ToolError("a process cannot steer itself")
        status = ProcessStatus(target.status)
        if status in (ProcessStatus.CLOSED, ProcessStatus.PAUSED):
            raise ToolError(f"{target.name!r} is {status.value} and takes no messages")
        result = await self._inbox.steer(
            target.id,
            "",
            "",
            UserChatInput(
                content=parsed.content,
                idempotency_key=key,
                sender_process_id=caller.id,
                from_user=f"process:{caller.name}",
            ),
        )
        if result.outcome is DeliveryOutcome.REJECTED:
            raise ToolError(result.reason)
        return Steered(ok=True, outcome=result.outcome.value, name=target.name)

    async def _process_stop(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        target = await self._target(caller, parse_args(NamedArgs, args).name)
        if target.id == caller.id:
            raise ToolError("a process cannot stop itself")
        stopped = await self._processes.stop(target, stopped_by=caller.id)
        return Stopped(
            name=stopped.name,
            status=stopped.status.value,
            close_reason=stopped.close_reason.value if stopped.close_reason else None,
        )

    async def _process_pause(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        target = await self._target(caller, parse_args(NamedArgs, args).name)
        if target.id == caller.id:
            raise ToolError("a process cannot pause itself")
        paused = await self._processes.pause(target)
        return Paused(name=paused.name, status=paused.status.value)

    async def _process_list(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        found = await self._processes.in_session(
            caller.session_id,
            include_terminated=parse_args(ListArgs, args).include_terminated,
        )
        return ProcessList(processes=[ProcessSummary.of(p) for p in found if p.id != caller.id])

    async def _process_status(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        target = await self._target(caller, parse_args(NamedArgs, args).name)
        return ProcessSummary.of(target.think_process())

    async def _recipe_list(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        resp = await self._recipes.ListRecipes(
            rpb.ListRecipesRequest(
                tenant_id=caller.tenant_id,
                project_id=caller.project_id,
                listed_only=True,
            )
        )
        return RecipeList(
            recipes=[
                RecipeEntry(
                    name=r.name,
                    description=r.description,
                    engine=r.engine,
                    source=r.source,
                    tags=list(r.tags),
                )
                for r in resp.recipes
            ]
        )

    async def _recipe_describe(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        name = parse_args(NamedArgs, args).name
        try:
            r = await self._recipes.GetRecipe(
                rpb.GetRecipeRequest(
                    tenant_id=caller.tenant_id,
                    project_id=caller.project_id,
                    name=name,
                )
            )
        except Exception as exc:
            details = _details(exc)
            raise ToolError(f"no recipe {name!r}: {details}") from exc
        return RecipeDescribed(
            name=r.name, engine=r.engine, source=r.source, document=struct_to_dict(r.document)
        )

    async def _manual_list(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        resp = await self._recipes.ListManuals(
            rpb.ListManualsRequest(
                tenant_id=caller.tenant_id,
                project_id=caller.project_id,
                paths=_manual_paths(caller),
            )
        )
        return ManualList(
            manuals=[ManualEntry(name=m.name, title=m.title, size=m.size) for m in resp.manuals],
            missing=list(resp.missing),
        )

    async def _how_do_i(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        return await _how_do_i(self._howdoi, args)

    async def _manual_read(
        self, caller: Process, args: JsonObject, key: str, profile: str
    ) -> ToolResult:
        name = parse_args(NamedArgs, args).name
        paths = _manual_paths(caller)
        if name not in paths:
            raise ToolError(f"{name!r} is not one of your manuals: {', '.join(paths) or 'none'}")
        try:
            manual = await self._recipes.ReadManual(
                rpb.ReadManualRequest(
                    tenant_id=caller.tenant_id,
                    project_id=caller.project_id,
                    name=name,
                )
            )
        except grpc.aio.AioRpcError as exc:
            raise ToolError(f"manual {name!r}: {_details(exc)}") from exc
        return Manual(name=manual.name, title=manual.title, content=manual.content)


async def _how_do_i(howdoi: HowDoI, args: JsonObject) -> HowDoIAnswer:
    parsed = parse_args(HowDoIArgs, args)
    question, limit = parsed.question, parsed.limit
    try:
        hits = await howdoi.search(question, limit)
    except grpc.aio.AioRpcError as exc:
        raise ToolError(f"the manuals cannot be read now ({exc.code().name}); try again") from exc
    return HowDoIAnswer(
        question=question,
        sections=[Section(source=h.source, title=h.title, text=h.excerpt) for h in hits],
        note=None if hits else "nothing matched; try other words, or ask the user",
    )


def _manual_paths(caller: Process) -> list[str]:
    """The manuals the process was spawned with (its snapshot), not the recipe as it is now."""
    paths = caller.params.get("manualPaths") or []
    return [str(p) for p in paths] if isinstance(paths, list) else []
