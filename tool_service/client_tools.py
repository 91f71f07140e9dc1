"""Tools a client hosts for its session (docs/clients.md "Client tools"): one document per session
in `client_tools`, naming the gateway replica that holds the client's socket. The gateway
registers them when the client sends `client-tool-register` and drops them when the socket
leaves the session; invocations go to that gateway's ToolHost, which asks the client."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from vance.profiles import CLIENT_TOOL_PROFILES
from vance.store import Document

OWNER = "client"
LABEL = "@client"
# Every client tool's name starts so (the gateway refuses others): it cannot shadow a service
# tool, and the model can tell that the call runs on the user's machine.
CLIENT_PREFIX = "client_"
# The original's bound on a client's answer; a tool may declare its own (a long exec).
DEFAULT_TIMEOUT_MS = 30_000


class ClientTools:
    def __init__(self, db: AsyncDatabase[Document]) -> None:
        self._c = db["client_tools"]

    async def register(
        self, session_id: str, connection_id: str, address: str, specs: list[dict[str, Any]]
    ) -> int:
        """Replaces the session's tools: the newest socket bound to a session is the one that
        can answer (a reconnect through another gateway replica moves them there)."""
        await self._c.replace_one(
            {"_id": session_id},
            {
                "_id": session_id,
                "connection_id": connection_id,
                "address": address,
                "tools": specs,
            },
            upsert=True,
        )
        return len(specs)

    async def unregister(self, session_id: str, connection_id: str) -> bool:
        """Only the socket that registered may drop them: a late drop of an old socket must
        not take the tools of the one that replaced it."""
        done = await self._c.delete_one({"_id": session_id, "connection_id": connection_id})
        return done.deleted_count > 0

    async def of_session(self, session_id: str) -> Document | None:
        if not session_id:
            return None
        return await self._c.find_one({"_id": session_id})


def as_registry_specs(doc: Document | None) -> list[Document]:
    """A session's client tools in the registry's shape, so the pool selects and prunes them as
    any other tool: label `@client`, offered only to profiles that allow client tools."""
    if doc is None:
        return []
    return [
        {
            "_id": t["name"],
            "description": t.get("description", ""),
            "parameters": t.get("parameters") or {},
            "labels": [LABEL],
            "allowed_profiles": CLIENT_TOOL_PROFILES,
            "timeout_ms": int(t.get("timeout_ms") or DEFAULT_TIMEOUT_MS),
            "owner": OWNER,
            "address": doc.get("address", ""),
        }
        for t in doc.get("tools") or []
    ]
