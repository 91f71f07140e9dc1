"""The `bind_drops` and `bind_rounds` collections (lifecycle/bind_drops.py): a drop per taken
bind (the session id and when), and one round document per gateway replica (its round lease
and how far it has applied the drops). The only module that knows their field names."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from session_service.store.raw import Db
from vance.ids import new_id


@dataclass(frozen=True, slots=True)
class BindDrop:
    """A session whose bind was taken away or ended (the same drop may be read in several
    rounds: `drop_id` tells them apart)."""

    drop_id: str
    session_id: str


@dataclass(frozen=True, slots=True)
class BindRoundState:
    """A gateway replica's latest round: trusted until `until_ms`, and the read_at_ms of the
    latest round reply whose drops it had applied (`applied_ms`), both wall-clock ms."""

    replica_id: str
    until_ms: int
    applied_ms: int


class BindDropStore:
    def __init__(self, db: Db) -> None:
        self._drops = db["bind_drops"]
        self._rounds = db["bind_rounds"]

    async def put_round(self, state: BindRoundState) -> None:
        await self._rounds.update_one(
            {"_id": state.replica_id},
            {"$set": {"until_ms": state.until_ms, "applied_ms": state.applied_ms}},
            upsert=True,
        )

    async def drops_since(self, since_ms: int) -> list[BindDrop]:
        return [
            BindDrop(str(d["_id"]), str(d["s"]))
            async for d in self._drops.find({"at": {"$gte": since_ms}}, {"s": 1})
        ]

    async def add_drops(self, session_ids: Iterable[str], at_ms: int) -> None:
        docs = [{"_id": new_id("drop"), "s": s, "at": at_ms} for s in session_ids]
        if docs:
            await self._drops.insert_many(docs)

    async def count_behind(self, live_after_ms: int, applied_before_ms: int) -> int:
        """The replicas whose round lease runs past `live_after_ms` and that have not applied
        the drops read before `applied_before_ms`."""
        return await self._rounds.count_documents(
            {"until_ms": {"$gt": live_after_ms}, "applied_ms": {"$lt": applied_before_ms}}
        )

    async def forget(self, session_id: str) -> None:
        """A deleted session's drops."""
        await self._drops.delete_many({"s": session_id})

    async def sweep(self, before_ms: int) -> None:
        """Drops written before `before_ms`, and round documents whose lease ended by then."""
        await self._drops.delete_many({"at": {"$lt": before_ms}})
        await self._rounds.delete_many({"until_ms": {"$lt": before_ms}})
