"""Conflict protection between a user's hubs (seed 001 §6.4): two hubs never create the same
project. Each `project_create` first claims (tenant, user, name) in `hub_project_names`; the
claim's `_id` is the JSON of the three, so the store's unique `_id` index is the unique index
on (tenant, user, project name) and decides between concurrent calls on any replica. The
loser's tool result names the other hub and says to join the project with `project_open`; it
is given once the winner's project exists (or after CREATED_WAIT_S), so that call works.

A claim stays after its project is made: it records which hub made it. A claim whose
creation failed (the name is another user's project in the tenant) is released."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass

from pymongo.asynchronous.database import AsyncDatabase

from process_service.hub.tool_models import ProjectCreated
from process_service.process_model import Process
from process_service.tool_args import ToolError
from vance.clock import Clock
from vance.store import Document, is_duplicate_key

logger = logging.getLogger(__name__)

CREATED_WAIT_S = 10.0  # how long the loser waits for the winner's project to exist
_POLL_S = 0.1


def _id(caller: Process, name: str) -> str:
    return json.dumps([caller.tenant_id, caller.owner_user_id, name])


@dataclass(frozen=True)
class NameClaim:
    """A hub's claim of a project name (a `hub_project_names` document)."""

    id: str
    eddie_process_id: str
    session_id: str
    key: str
    at_ms: int
    created: bool

    @classmethod
    def from_doc(cls, doc: Document) -> NameClaim:
        return cls(
            id=str(doc["_id"]),
            eddie_process_id=str(doc.get("eddie_process_id", "")),
            session_id=str(doc.get("session_id", "")),
            key=str(doc.get("key", "")),
            at_ms=int(doc.get("at_ms", 0)),
            created=bool(doc.get("created")),
        )


def _ago(ms: int) -> str:
    s = max(0, ms // 1000)
    if s < 90:
        return f"{s} seconds ago"
    if s < 5400:
        return f"{s // 60} minutes ago"
    return f"{s // 3600} hours ago"


class ProjectNames:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self._col = db["hub_project_names"]
        self._clock = clock

    async def claim(self, caller: Process, name: str, key: str) -> None:
        """Holds the name for this call, or raises the conflict the model turns into "your
        other hub just created that"."""
        for _ in range(3):
            held = await self._try(caller, name, key)
            if held is None:
                return
            if held.eddie_process_id == caller.id:
                raise ToolError(
                    f"a project named {name!r} exists already; open it with project_open or "
                    "pick another name"
                )
            done = await self._created(held)
            if done is None:
                continue  # the other hub's creation failed and let the name go: claim again
            raise ToolError(_conflict(name, done, self._clock.now_ms()))
        raise ToolError(f"the project {name!r} is being created elsewhere; try project_open")

    async def _try(self, caller: Process, name: str, key: str) -> NameClaim | None:
        doc: Document = {
            "_id": _id(caller, name),
            "tenant_id": caller.tenant_id,
            "user_id": caller.owner_user_id,
            "name": name,
            "eddie_process_id": caller.id,
            "session_id": caller.session_id,
            "key": key,
            "at_ms": self._clock.now_ms(),
            "created": False,
        }
        try:
            await self._col.insert_one(doc)
            return None
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
        held = await self._col.find_one({"_id": doc["_id"]})
        if held is None or held.get("key") == key:
            return None  # released meanwhile (claimed again next round), or a redo of this call
        return NameClaim.from_doc(held)

    async def _created(self, held: NameClaim) -> NameClaim | None:
        """The winner's claim once its project exists; None when it was released."""
        deadline = asyncio.get_running_loop().time() + CREATED_WAIT_S
        claim: NameClaim | None = held
        while claim is not None and not claim.created:
            if asyncio.get_running_loop().time() >= deadline:
                return claim  # still in the making: the model may try project_open later
            await asyncio.sleep(_POLL_S)
            doc = await self._col.find_one({"_id": held.id})
            claim = None if doc is None else NameClaim.from_doc(doc)
        return claim

    async def created(self, caller: Process, name: str, result: ProjectCreated) -> None:
        """Marks the claim's project made, keeping project_create's answer."""
        await self._col.update_one(
            {"_id": _id(caller, name)}, {"$set": {"created": True, "result": result.to_json()}}
        )

    async def release(self, caller: Process, name: str, key: str) -> None:
        await self._col.delete_one({"_id": _id(caller, name), "key": key})


def _conflict(name: str, held: NameClaim, now_ms: int) -> str:
    when = _ago(now_ms - (held.at_ms or now_ms))
    state = "exists now" if held.created else "is being made"
    return (
        f"conflict: your other hub (hub session {held.session_id}) created the "
        f"project {name!r} {when}, and it {state}. It is the same project: do not create it "
        f"again. Join it with project_open{{name: {name!r}}} and tell the user their other hub "
        "already made it."
    )
