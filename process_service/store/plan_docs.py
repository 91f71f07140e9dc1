"""The `plans` collection (process_service/lifecycle/plans.py): the one place that knows how a
Plan record (process_service/plan_model.py) is laid out in the store."""

from __future__ import annotations

from pymongo.asynchronous.collection import AsyncCollection

from process_service.plan_model import Plan, PlanStep
from vance.store import Document


def _step_doc(step: PlanStep) -> Document:
    doc: Document = {"id": step.id, "text": step.text, "status": step.status}
    if step.project:
        doc["project"] = step.project
    return doc


def _step_from_doc(doc: Document) -> PlanStep:
    return PlanStep(
        id=str(doc["id"]),
        text=str(doc["text"]),
        status=str(doc.get("status") or "pending"),
        project=str(doc.get("project") or ""),
    )


def _plan_fields(plan: Plan) -> Document:
    doc: Document = {
        "session_id": plan.session_id,
        "process_name": plan.process_name,
        "engine": plan.engine,
        "plan_id": plan.plan_id,
        "title": plan.title,
        "steps": [_step_doc(s) for s in plan.steps],
        "mode": plan.mode,
        "status": plan.status,
        "propose_key": plan.propose_key,
        "version": plan.version,
    }
    if plan.decide_key or plan.decision:
        doc |= {"decide_key": plan.decide_key, "decision": plan.decision}
    return doc


def _plan_from_doc(doc: Document) -> Plan:
    return Plan(
        process_id=str(doc["_id"]),
        session_id=str(doc.get("session_id") or ""),
        process_name=str(doc.get("process_name") or ""),
        engine=str(doc.get("engine") or ""),
        plan_id=str(doc["plan_id"]),
        title=str(doc.get("title") or ""),
        steps=tuple(_step_from_doc(s) for s in doc.get("steps") or []),
        mode=str(doc.get("mode") or "normal"),
        status=str(doc.get("status") or ""),
        propose_key=str(doc.get("propose_key") or ""),
        version=int(doc.get("version", 0)),
        decide_key=str(doc.get("decide_key") or ""),
        decision=str(doc.get("decision") or ""),
    )


class PlanStore:
    def __init__(self, col: AsyncCollection[Document]) -> None:
        self._col = col

    async def get(self, process_id: str) -> Plan | None:
        doc = await self._col.find_one({"_id": process_id})
        return None if doc is None else _plan_from_doc(doc)

    async def replace(self, plan: Plan) -> None:
        """A new proposal: whatever plan the process had is gone."""
        await self._col.replace_one({"_id": plan.process_id}, _plan_fields(plan), upsert=True)

    async def swap(self, old: Plan, new: Plan) -> bool:
        """Writes `new` if the stored plan is still at `old`'s version (new carries the next
        one); False when another write came first."""
        result = await self._col.update_one(
            {"_id": old.process_id, "version": old.version}, {"$set": _plan_fields(new)}
        )
        return result.modified_count == 1
