"""Handlers of the plan-mode frames (docs/protocol.md "Plan mode"): the user's decision on a
proposed plan, and a process's plan and todo list as they stand."""

from __future__ import annotations

from typing import Any

from gateway.connection import Connection
from gateway.errors import GatewayError
from gateway.inputs import PlanDecisionData, Targeted, required
from gateway.process_frames import target
from vance.v1 import process_pb2 as ppb

DECISIONS = ("approve", "edit", "reject")


def plan_data(p: ppb.PlanState) -> dict[str, Any]:
    return {
        "processId": p.process_id,
        "planId": p.plan_id or None,
        "title": p.title or None,
        "mode": p.mode or "normal",
        "status": p.status or None,
        "todos": [
            {
                "id": s.id,
                "text": s.text,
                "status": s.status,
                **({"project": s.project} if s.project else {}),
            }
            for s in p.steps
        ],
    }


async def _process_id(conn: Connection, data: Targeted) -> str:
    ref = target(conn, data)
    if ref.process_id:
        return ref.process_id
    listed = await conn.clients.processes.ListProcesses(
        ppb.ListProcessesRequest(session_id=ref.session_id)
    )
    found = [p.id for p in listed.processes if p.name == ref.process_name]
    if not found:
        raise GatewayError(404, f"no process named {ref.process_name!r}", "process_not_found")
    return found[0]


async def plan_decision(conn: Connection, data: PlanDecisionData) -> dict[str, Any]:
    """approve | edit (with the user's steps) | reject; the target defaults to the chat, a
    forwarded worker plan names its `processId`."""
    process_id = await _process_id(conn, data)
    plan_id = required(data.plan_id, "planId")
    decision = required(data.decision, "decision")
    if decision not in DECISIONS:
        raise GatewayError(400, "decision must be approve, edit or reject", "bad_decision")
    if decision == "edit" and not data.steps:
        raise GatewayError(400, "an edit needs the steps", "steps_required", field="steps")
    state = await conn.clients.processes.DecidePlan(
        ppb.DecidePlanRequest(
            process_id=process_id,
            plan_id=plan_id,
            decision=decision,
            steps=[ppb.PlanStep(text=s.text, project=s.project or "") for s in data.steps or []],
            comment=data.comment or "",
            idempotency_key=data.idempotency_key or f"{plan_id}:{decision}",
        )
    )
    return plan_data(state)


async def plan_get(conn: Connection, data: Targeted) -> dict[str, Any]:
    state = await conn.clients.processes.GetPlan(
        ppb.ProcessRef(process_id=await _process_id(conn, data))
    )
    return plan_data(state)
