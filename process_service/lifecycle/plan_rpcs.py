"""The plan-mode RPCs of ProcessService (process_service/lifecycle/plans.py) and the connection profile
of a session (profiles apply per connection, docs/protocol.md "Profiles"); kept apart from
service.py."""

from __future__ import annotations

import re

import grpc

from process_service.lifecycle.plans import Plans
from process_service.store.process_store import ProcessStore
from vance.domain import PROFILE_PATTERN
from vance.errors import InvalidArgumentError, grpc_errors
from vance.json_types import JsonObject
from vance.v1 import process_pb2 as ppb


def plan_to_proto(view: JsonObject) -> ppb.PlanState:
    """plans.py's view of a plan (the JSON the plan tools answer with) as the proto."""
    steps = view.get("steps")
    return ppb.PlanState(
        process_id=str(view["processId"]),
        session_id=str(view.get("sessionId") or ""),
        plan_id=str(view["planId"]),
        title=str(view.get("title") or ""),
        mode=str(view.get("mode") or "normal"),
        status=str(view.get("status") or ""),
        steps=[_step(s) for s in steps if isinstance(s, dict)] if isinstance(steps, list) else [],
    )


def _step(step: JsonObject) -> ppb.PlanStep:
    return ppb.PlanStep(
        id=str(step["id"]),
        text=str(step["text"]),
        status=str(step["status"]),
        project=str(step.get("project", "")),
    )


class ConnectionProfiles:
    """A user's connection bound to a session whose profile is another (a project Eddie made,
    profile `eddie`): its processes are pruned by the connection's profile until it leaves."""

    def __init__(self, store: ProcessStore) -> None:
        self._store = store

    async def set(self, session_id: str, profile: str) -> int:
        if profile and not re.match(PROFILE_PATTERN, profile):
            raise InvalidArgumentError(
                f"profile must match {PROFILE_PATTERN}", reason="bad_profile"
            )
        return await self._store.set_connection_profile(session_id, profile)


class PlanRpcs:
    plans: Plans
    connection_profiles: ConnectionProfiles

    @grpc_errors
    async def DecidePlan(
        self,
        request: ppb.DecidePlanRequest,
        context: grpc.aio.ServicerContext[ppb.DecidePlanRequest, ppb.PlanState],
    ) -> ppb.PlanState:
        if not request.process_id or not request.plan_id:
            raise InvalidArgumentError("process_id and plan_id are required")
        steps = [{"text": s.text, "project": s.project} for s in request.steps]
        view = await self.plans.decide(
            request.process_id,
            request.plan_id,
            request.decision,
            steps,
            request.comment,
            request.idempotency_key,
        )
        return plan_to_proto(view)

    @grpc_errors
    async def GetPlan(
        self,
        request: ppb.ProcessRef,
        context: grpc.aio.ServicerContext[ppb.ProcessRef, ppb.PlanState],
    ) -> ppb.PlanState:
        if not request.process_id:
            raise InvalidArgumentError("process_id is required")
        return plan_to_proto(await self.plans.get(request.process_id))

    @grpc_errors
    async def SetConnectionProfile(
        self,
        request: ppb.SetConnectionProfileRequest,
        context: grpc.aio.ServicerContext[
            ppb.SetConnectionProfileRequest, ppb.SetConnectionProfileResponse
        ],
    ) -> ppb.SetConnectionProfileResponse:
        if not request.session_id:
            raise InvalidArgumentError("session_id is required")
        count = await self.connection_profiles.set(request.session_id, request.profile)
        return ppb.SetConnectionProfileResponse(processes=count)
