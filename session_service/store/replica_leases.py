"""The `replica_leases` collection (lifecycle/replica_takeover.py): one document per gateway
replica, its lease
and the sessions it holds. The only module that knows its field names."""

from __future__ import annotations

from dataclasses import dataclass, field

from pymongo import ReturnDocument

from session_service.store.raw import Bson, Db


@dataclass(frozen=True, slots=True)
class ReplicaLease:
    replica_id: str
    lease_until_ms: int = 0
    # session id -> the connection it was bound to when the replica last said so
    sessions: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def from_doc(doc: Bson) -> ReplicaLease:
        # A list, not a map: session ids as keys would be field names, and a list is one value.
        held = {str(e["s"]): str(e["c"]) for e in doc.get("sessions") or []}
        return ReplicaLease(str(doc.get("_id", "")), int(doc.get("lease_until_ms") or 0), held)


def _held(sessions: dict[str, str]) -> list[Bson]:
    return [{"s": k, "c": v} for k, v in sorted(sessions.items())]


class ReplicaLeases:
    def __init__(self, db: Db) -> None:
        self._c = db["replica_leases"]

    async def renew(self, replica_id: str, sessions: dict[str, str], until_ms: int) -> None:
        await self._c.update_one(
            {"_id": replica_id},
            {"$set": {"sessions": _held(sessions), "lease_until_ms": until_ms}},
            upsert=True,
        )

    async def forget(self, session_id: str) -> None:
        """Takes a session out of the lease documents that list it."""
        async for doc in self._c.find({"sessions.s": session_id}):
            kept = [e for e in doc.get("sessions") or [] if e.get("s") != session_id]
            await self._c.update_one({"_id": doc["_id"]}, {"$set": {"sessions": kept}})

    async def remove(self, replica_id: str) -> ReplicaLease | None:
        doc = await self._c.find_one_and_delete({"_id": replica_id})
        return ReplicaLease.from_doc(doc) if doc else None

    async def end(self, replica_id: str, now_ms: int, sessions: dict[str, str]) -> ReplicaLease:
        """Ends the lease now (a replica shutting down), with the sessions it says it holds
        (none given: those it last renewed with)."""
        update: Bson = {"lease_until_ms": now_ms, "stopped": True}
        if sessions:
            update["sessions"] = _held(sessions)
        doc = await self._c.find_one_and_update(
            {"_id": replica_id},
            {"$set": update},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return ReplicaLease.from_doc(doc or {"_id": replica_id})

    async def ended_before(self, ms: int) -> list[ReplicaLease]:
        docs = await self._c.find({"lease_until_ms": {"$lt": ms}}).to_list(None)
        return [ReplicaLease.from_doc(d) for d in docs]

    async def take(self, lease: ReplicaLease) -> ReplicaLease | None:
        """Deletes the lease if it is still as read: one replica wins a takeover."""
        doc = await self._c.find_one_and_delete(
            {"_id": lease.replica_id, "lease_until_ms": lease.lease_until_ms}
        )
        return ReplicaLease.from_doc(doc) if doc else None
