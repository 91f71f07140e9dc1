"""Plan mode (docs/architecture.md "Plan mode"): a process proposes a plan, the user approves,
edits or rejects it, and an approved plan is executed as a todo list.

One plan per process, the current one, in `plans` under the process id: title, steps (each
with id, text, status, optional project), mode (`normal`, `plan` while a proposal waits,
`execution` while its todos run) and status (`proposed`, `approved`, `rejected`, `done`). Every
change is published into the process's session as a stored notice (`plan-proposed`,
`todos-updated`, `process-mode-changed`), so a client that reconnects replays it, and copied to
the hubs that observe the process with `forwardedBy`. Writes compare and set on `version`, so
the user's decision and the engine's todo updates never overwrite each other. The plan is a
record (process_service/plan_model.py); only process_service/store/plan_docs.py knows its fields."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace

from pymongo.asynchronous.database import AsyncDatabase

from process_service.lifecycle.observations import Observations
from process_service.plan_model import Plan, PlanStep
from process_service.process_model import Process
from process_service.runtime.inbox import Inbox
from process_service.store.plan_docs import PlanStore
from vance.domain import DeliveryOutcome, ExternalCommand
from vance.errors import (
    AbortedError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from vance.ids import new_id
from vance.json_types import JsonObject, JsonValue
from vance.store import Document

logger = logging.getLogger(__name__)

Publish = Callable[[list[str], str, JsonObject], Awaitable[None]]

TODO_STATUSES = ("pending", "in_progress", "done", "skipped")
DECISIONS = ("approve", "edit", "reject")
MAX_STEPS = 20
MAX_TEXT = 500
DECISION_COMMAND = "plan-decision"  # the ExternalCommand the engine gets
_ATTEMPTS = 8


def clean_steps(raw: object) -> tuple[PlanStep, ...]:
    """Steps as the model or the user gave them: strings or {text, project?}; 1-20, each
    non-empty. Ids are t1..tN in order; every step starts pending."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_STEPS:
        raise InvalidArgumentError(f"steps must list 1 to {MAX_STEPS} steps", reason="bad_steps")
    out = []
    for i, step in enumerate(raw, 1):
        text, project = (step, "") if isinstance(step, str) else ("", "")
        if isinstance(step, dict):
            text, project = str(step.get("text") or ""), str(step.get("project") or "")
        if not text.strip():
            raise InvalidArgumentError(f"step {i} has no text", reason="bad_steps")
        out.append(
            PlanStep(
                id=f"t{i}", text=text.strip()[:MAX_TEXT], status="pending", project=project.strip()
            )
        )
    return tuple(out)


def step_json(step: PlanStep, *, status: bool = True) -> JsonObject:
    """A step as the plan tools, the plan frames and the engine's command carry it."""
    out: JsonObject = {"id": step.id, "text": step.text}
    if status:
        out["status"] = step.status
    if step.project:
        out["project"] = step.project
    return out


def _steps_json(plan: Plan) -> list[JsonValue]:
    return [step_json(s) for s in plan.steps]


def plan_view(plan: Plan | None, process_id: str) -> JsonObject:
    """The plan as the plan tools answer (JSON) and plan_rpcs.py turns into the proto."""
    if plan is None:
        return {"processId": process_id, "planId": "", "mode": "normal", "steps": []}
    return {
        "processId": process_id,
        "sessionId": plan.session_id,
        "planId": plan.plan_id,
        "title": plan.title,
        "mode": plan.mode,
        "status": plan.status,
        "steps": _steps_json(plan),
    }


class Plans:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        inbox: Inbox,
        observations: Observations,
        publish: Publish,
    ) -> None:
        self._store = PlanStore(db["plans"])
        self._inbox = inbox
        self._observations = observations
        self._publish = publish

    async def invoke(
        self, tool: str, caller: Process, args: Mapping[str, JsonValue], key: str
    ) -> JsonObject:
        """The plan tools (process_service/tools/talk_specs.py); `args` is the model's JSON."""
        if tool == "plan_store":
            title = args.get("title")
            return await self.propose(
                caller, title if isinstance(title, str) else "", args.get("steps"), key
            )
        updates = args.get("todos")
        if not isinstance(updates, list) or not updates:
            updates = [{"id": args.get("id"), "status": args.get("status")}]
        return await self.todo_update(caller, [u for u in updates if isinstance(u, dict)])

    async def get(self, process_id: str) -> JsonObject:
        return plan_view(await self._store.get(process_id), process_id)

    async def propose(self, process: Process, title: str, steps: object, key: str) -> JsonObject:
        """A new proposal replaces whatever plan the process had; a redone turn (same key)
        proposes once."""
        pid = process.id
        old = await self._store.get(pid)
        if old is not None and old.propose_key == key:
            return plan_view(old, pid)
        plan = Plan(
            process_id=pid,
            session_id=process.session_id,
            process_name=process.name,
            engine=process.engine,
            plan_id=new_id("plan"),
            title=title.strip()[:MAX_TEXT] or "Plan",
            steps=clean_steps(steps),
            mode="plan",
            status="proposed",
            propose_key=key,
            version=(old.version if old else 0) + 1,
        )
        await self._store.replace(plan)
        steps_out: list[JsonValue] = [step_json(s, status=False) for s in plan.steps]
        await self._notify(
            plan,
            "plan-proposed",
            {"planId": plan.plan_id, "title": plan.title, "steps": steps_out},
        )
        await self._mode(plan, "plan", old.mode if old else "normal")
        return plan_view(plan, pid)

    async def decide(
        self,
        process_id: str,
        plan_id: str,
        decision: str,
        steps: Sequence[Mapping[str, str]],
        comment: str,
        key: str,
    ) -> JsonObject:
        """The user's decision: approve (execution starts with every step pending), edit (the
        user's steps, then as approve) or reject (back to normal). The engine hears it as an
        EXTERNAL_COMMAND `plan-decision` in its inbox."""
        if decision not in DECISIONS:
            raise InvalidArgumentError(
                f"decision must be one of {', '.join(DECISIONS)}", reason="bad_decision"
            )
        new_steps = clean_steps(list(steps)) if decision == "edit" else None
        for _ in range(_ATTEMPTS):
            plan = await self._store.get(process_id)
            if plan is None or plan.plan_id != plan_id:
                raise NotFoundError(
                    f"no plan {plan_id!r} for this process", reason="plan_not_found"
                )
            if plan.status != "proposed":
                if key and plan.decide_key == key:
                    return plan_view(plan, process_id)  # the same decision again
                raise FailedPreconditionError(
                    f"the plan is {plan.status}, not awaiting a decision",
                    reason="plan_not_pending",
                )
            rejected = decision == "reject"
            fresh = replace(
                plan,
                decide_key=key,
                decision=decision,
                status="rejected" if rejected else "approved",
                mode="normal" if rejected else "execution",
                steps=plan.steps if new_steps is None or rejected else new_steps,
                version=plan.version + 1,
            )
            if await self._store.swap(plan, fresh):
                break
        else:
            raise AbortedError("the plan changed too often; try again", reason="plan_busy")
        await self._mode(fresh, fresh.mode, "plan")
        if not rejected:
            await self._todos(fresh)
        params: JsonObject = {
            "planId": plan_id,
            "decision": decision,
            "comment": comment,
            "steps": _steps_json(fresh),
            "title": fresh.title,
        }
        result = await self._inbox.steer(
            process_id,
            "",
            "",
            ExternalCommand(
                command=DECISION_COMMAND,
                params=params,
                idempotency_key=f"plan:{plan_id}:decision",
            ),
        )
        if result.outcome is DeliveryOutcome.REJECTED:
            logger.warning("plan decision for %s not delivered: %s", process_id, result.reason)
        return plan_view(fresh, process_id)

    async def todo_update(
        self, process: Process, updates: Sequence[Mapping[str, JsonValue]]
    ) -> JsonObject:
        """The engine marks todos while it executes; when every todo is done or skipped the
        plan is done and the process back in normal mode."""
        pid = process.id
        for _ in range(_ATTEMPTS):
            plan = await self._store.get(pid)
            if plan is None or plan.mode != "execution":
                raise FailedPreconditionError(
                    "no approved plan is being executed; propose one with plan_propose",
                    reason="plan_not_executing",
                )
            by_id = {s.id: s for s in plan.steps}
            for u in updates:
                todo, status = str(u.get("id") or ""), str(u.get("status") or "")
                if todo not in by_id:
                    raise InvalidArgumentError(
                        f"no todo {todo!r}; the todos are {', '.join(by_id)}", reason="bad_todo"
                    )
                if status not in TODO_STATUSES:
                    raise InvalidArgumentError(
                        f"status must be one of {', '.join(TODO_STATUSES)}",
                        reason="bad_todo_status",
                    )
                by_id[todo] = replace(by_id[todo], status=status)
            steps = tuple(by_id.values())
            finished = all(s.status in ("done", "skipped") for s in steps)
            fresh = replace(plan, steps=steps, version=plan.version + 1)
            if finished:
                fresh = replace(fresh, status="done", mode="normal")
            if await self._store.swap(plan, fresh):
                break
        else:
            raise AbortedError("the plan changed too often; try again", reason="plan_busy")
        await self._todos(fresh)
        if finished:
            await self._mode(fresh, "normal", "execution")
        return plan_view(fresh, pid)

    async def _todos(self, plan: Plan) -> None:
        await self._notify(
            plan, "todos-updated", {"planId": plan.plan_id, "todos": _steps_json(plan)}
        )

    async def _mode(self, plan: Plan, mode: str, previous: str) -> None:
        await self._notify(
            plan,
            "process-mode-changed",
            {"mode": mode, "previousMode": previous, "planId": plan.plan_id},
        )

    async def _notify(self, plan: Plan, type_: str, data: JsonObject) -> None:
        pid = plan.process_id
        body: JsonObject = {
            "processId": pid,
            "processName": plan.process_name,
            "engine": plan.engine,
            "sessionId": plan.session_id,
            **data,
        }
        await self._publish([plan.session_id], type_, body)
        await self._observations.forward_notice(pid, type_, body)
