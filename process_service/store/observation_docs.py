"""The `observations` collection (process_service/lifecycle/observations.py): one document per
observed process, its observers under `observers.<observer id>`. The one place that knows how
an Observer record (process_service/observer_model.py) is laid out in the store."""

from __future__ import annotations

from pymongo.asynchronous.collection import AsyncCollection

from process_service.observer_model import Observer
from vance.store import Document


def _observer_from_doc(doc: Document) -> Observer:
    return Observer(
        mode=str(doc.get("mode") or ""),
        session_id=str(doc["session_id"]),
        engine=str(doc.get("engine") or ""),
        project=str(doc.get("project") or ""),
    )


class ObservationStore:
    def __init__(self, col: AsyncCollection[Document]) -> None:
        self._col = col

    async def put(self, observed_id: str, observer_id: str, observer: Observer) -> None:
        """Adds or changes one observer of `observed_id`."""
        await self._col.update_one(
            {"_id": observed_id},
            {
                "$set": {
                    f"observers.{observer_id}": {
                        "mode": observer.mode,
                        "session_id": observer.session_id,
                        "engine": observer.engine,
                        "project": observer.project,
                    }
                }
            },
            upsert=True,
        )

    async def observers(self, observed_id: str) -> dict[str, Observer]:
        """Observer id -> its observer of `observed_id` (empty when nobody observes it)."""
        doc = await self._col.find_one({"_id": observed_id})
        found = (doc or {}).get("observers") or {}
        return {str(k): _observer_from_doc(v) for k, v in found.items()}

    async def observed_ids(self) -> list[str]:
        return [str(d["_id"]) async for d in self._col.find({}, {"_id": 1})]
