"""Plan mode (docs/architecture.md "Plan mode"): a process proposes a plan, the user approves,
edits or rejects it, and an approved plan is executed as a todo list.

One plan per process, the current one, in `plans` under the process id: title, steps (each
with id, text, status, optional project), mode (`normal`, `plan` while a proposal waits,
`execution` while its todos run) and status (`proposed`, `approved`, `rejected`, `done`). Every
change is published into the process's session as a stored notice (`plan-proposed`,
`todos-updated`, `process-mode-changed`), so a client that reconnects replays it, and copied to
the hubs that observe the process with `forwardedBy`. Writes compare and set on `version`, so
the user's decision and the engine's todo updates never overwrite each other."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from process_service.lifecycle.observations import Observations
from process_service.process_model import Process
from process_service.runtime.inbox import Inbox
from vance.domain import DeliveryOutcome, ExternalCommand
from vance.errors import (
    AbortedError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from vance.ids import new_id
from vance.store import Document

logger = logging.getLogger(__name__)

Publish = Callable[[list[str], str, dict[str, Any]], Awaitable[None]]

TODO_STATUSES = ("pending", "in_progress", "done", "skipped")
DECISIONS = ("approve", "edit", "reject")
MAX_STEPS = 20
MAX_TEXT = 500
DECISION_COMMAND = "plan-decision"  # the ExternalCommand the engine gets
_ATTEMPTS = 8


def clean_steps(raw: Any) -> list[dict[str, str]]:
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
        entry = {"id": f"t{i}", "text": text.strip()[:MAX_TEXT], "status": "pending"}
        if project.strip():
            entry["project"] = project.strip()
        out.append(entry)
    return out


def plan_view(doc: dict[str, Any] | None, process_id: str) -> dict[str, Any]:
    if doc is None:
        return {"processId": process_id, "planId": "", "mode": "normal", "steps": []}
    return {
        "processId": process_id,
        "sessionId": doc.get("session_id", ""),
        "planId": doc["plan_id"],
        "title": doc.get("title", ""),
        "mode": doc.get("mode", "normal"),
        "status": doc.get("status", ""),
        "steps": list(doc.get("steps") or []),
    }


class Plans:
    def __init__(
        self,
        db: AsyncDatabase[Document],
        inbox: Inbox,
        observations: Observations,
        publish: Publish,
    ) -> None:
        self._col = db["plans"]
        self._inbox = inbox
        self._observations = observations
        self._publish = publish

    async def invoke(self, tool: str, caller: Process, args: dict[str, Any], key: str) -> Any:
        """The plan tools (process_service/tools/talk_specs.py)."""
        if tool == "plan_store":
            title = args.get("title")
            return await self.propose(
                caller, title if isinstance(title, str) else "", args.get("steps"), key
            )
        updates = args.get("todos")
        if not isinstance(updates, list) or not updates:
            updates = [{"id": args.get("id"), "status": args.get("status")}]
        return await self.todo_update(caller, [u for u in updates if isinstance(u, dict)])

    async def get(self, process_id: str) -> dict[str, Any]:
        return plan_view(await self._col.find_one({"_id": process_id}), process_id)

    async def propose(self, process: Process, title: str, steps: Any, key: str) -> dict[str, Any]:
        """A new proposal replaces whatever plan the process had; a redone turn (same key)
        proposes once."""
        pid = process.id
        old = await self._col.find_one({"_id": pid})
        if old is not None and old.get("propose_key") == key:
            return plan_view(old, pid)
        doc = {
            "session_id": process.session_id,
            "process_name": process.name,
            "engine": process.engine,
            "plan_id": new_id("plan"),
            "title": title.strip()[:MAX_TEXT] or "Plan",
            "steps": clean_steps(steps),
            "mode": "plan",
            "status": "proposed",
            "propose_key": key,
            "version": int((old or {}).get("version", 0)) + 1,
        }
        await self._col.replace_one({"_id": pid}, doc, upsert=True)
        view = plan_view(doc, pid)
        steps_out = [{k: v for k, v in s.items() if k != "status"} for s in view["steps"]]
        await self._notify(
            doc,
            pid,
            "plan-proposed",
            {"planId": view["planId"], "title": view["title"], "steps": steps_out},
        )
        await self._mode(doc, pid, "plan", str((old or {}).get("mode") or "normal"))
        return view

    async def decide(
        self,
        process_id: str,
        plan_id: str,
        decision: str,
        steps: list[dict[str, Any]],
        comment: str,
        key: str,
    ) -> dict[str, Any]:
        """The user's decision: approve (execution starts with every step pending), edit (the
        user's steps, then as approve) or reject (back to normal). The engine hears it as an
        EXTERNAL_COMMAND `plan-decision` in its inbox."""
        if decision not in DECISIONS:
            raise InvalidArgumentError(
                f"decision must be one of {', '.join(DECISIONS)}", reason="bad_decision"
            )
        new_steps = clean_steps(steps) if decision == "edit" else None
        for _ in range(_ATTEMPTS):
            doc = await self._col.find_one({"_id": process_id})
            if doc is None or doc.get("plan_id") != plan_id:
                raise NotFoundError(
                    f"no plan {plan_id!r} for this process", reason="plan_not_found"
                )
            if doc.get("status") != "proposed":
                if key and doc.get("decide_key") == key:
                    return plan_view(doc, process_id)  # the same decision again
                raise FailedPreconditionError(
                    f"the plan is {doc.get('status')}, not awaiting a decision",
                    reason="plan_not_pending",
                )
            update: dict[str, Any] = {"decide_key": key, "decision": decision}
            if decision == "reject":
                update |= {"status": "rejected", "mode": "normal"}
            else:
                update |= {"status": "approved", "mode": "execution"}
                if new_steps is not None:
                    update["steps"] = new_steps
            if await self._cas(doc, update):
                break
        else:
            raise AbortedError("the plan changed too often; try again", reason="plan_busy")
        fresh = {**doc, **update}
        await self._mode(fresh, process_id, fresh["mode"], "plan")
        if decision != "reject":
            await self._todos(fresh, process_id)
        params = {
            "planId": plan_id,
            "decision": decision,
            "comment": comment,
            "steps": fresh["steps"],
            "title": fresh.get("title", ""),
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

    async def todo_update(self, process: Process, updates: list[dict[str, Any]]) -> Any:
        """The engine marks todos while it executes; when every todo is done or skipped the
        plan is done and the process back in normal mode."""
        pid = process.id
        for _ in range(_ATTEMPTS):
            doc = await self._col.find_one({"_id": pid})
            if doc is None or doc.get("mode") != "execution":
                raise FailedPreconditionError(
                    "no approved plan is being executed; propose one with plan_propose",
                    reason="plan_not_executing",
                )
            steps = [dict(s) for s in doc.get("steps") or []]
            by_id = {s["id"]: s for s in steps}
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
                by_id[todo]["status"] = status
            finished = all(s["status"] in ("done", "skipped") for s in steps)
            update: dict[str, Any] = {"steps": steps}
            if finished:
                update |= {"status": "done", "mode": "normal"}
            if await self._cas(doc, update):
                break
        else:
            raise AbortedError("the plan changed too often; try again", reason="plan_busy")
        fresh = {**doc, **update}
        await self._todos(fresh, pid)
        if finished:
            await self._mode(fresh, pid, "normal", "execution")
        return plan_view(fresh, pid)

    async def _cas(self, doc: dict[str, Any], update: dict[str, Any]) -> bool:
        version = int(doc.get("version", 0))
        update["version"] = version + 1
        result = await self._col.update_one(
            {"_id": doc["_id"], "version": version}, {"$set": update}
        )
        return result.modified_count == 1

    async def _todos(self, doc: dict[str, Any], pid: str) -> None:
        await self._notify(
            doc, pid, "todos-updated", {"planId": doc["plan_id"], "todos": doc["steps"]}
        )

    async def _mode(self, doc: dict[str, Any], pid: str, mode: str, previous: str) -> None:
        await self._notify(
            doc,
            pid,
            "process-mode-changed",
            {"mode": mode, "previousMode": previous, "planId": doc["plan_id"]},
        )

    async def _notify(
        self, doc: dict[str, Any], pid: str, type_: str, data: dict[str, Any]
    ) -> None:
        body = {
            "processId": pid,
            "processName": doc.get("process_name", ""),
            "engine": doc.get("engine", ""),
            "sessionId": doc.get("session_id", ""),
            **data,
        }
        await self._publish([str(doc.get("session_id", ""))], type_, body)
        await self._observations.forward_notice(pid, type_, body)
