"""The tool registry (in the store, so every replica sees one) and invocation routing.

Every turn's pool is resolved from the registry, and it changes only when a service registers
its tools. So each replica keeps what it read until a change: a registration here drops it at
once and bumps one shared counter in the store (`tools_generation`); each replica reads that
counter once a second (`follow_store`) and, when another replica has registered, drops its copy
too. Both tell the watchers (engine workers holding pools, `WatchRegistry`), so a worker keeps
a pool for as long as it stays valid rather than asking again every few seconds of a chat
(issue 28: no cost per second in flight). While the counter cannot be read, a copy is kept at
most CACHE_S, as before, and the watchers are told to drop theirs."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from pymongo.asynchronous.database import AsyncDatabase

from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1 import tool_pb2_grpc
from vance.shared_counter import SharedCounter
from vance.store import Document
from vance.v1 import common_pb2 as pb

logger = logging.getLogger(__name__)

INVOKE_TIMEOUT_S = 60.0
# How long a copy is trusted when the shared counter is not being read: the bound within which
# a registration through another replica is seen then.
CACHE_S = 2.0


class ToolRegistry:
    def __init__(self, db: AsyncDatabase[Document], credential: ServiceCredential) -> None:
        self._tools = db["tools"]
        # The registrations of every replica, counted (vance/shared_counter.py).
        self._shared = SharedCounter(db["tools_generation"], "tools")
        self._credential = credential  # tool hosts check it like every service (vance/authz.py)
        self._channels: dict[str, grpc.aio.Channel] = {}
        # The registry as last read, and when (time.monotonic()).
        self._cache: tuple[float, list[Document]] | None = None
        # One read at a time: the callers that find the copy gone while a read runs wait for it
        # instead of each reading the registry again.
        self._reading = asyncio.Lock()
        self._generation = 0
        self._changed = asyncio.Condition()

    async def register(self, owner: str, address: str, specs: list[dict[str, Any]]) -> int:
        for spec in specs:
            await self._tools.replace_one(
                {"_id": spec["name"]},
                {"_id": spec["name"], **spec, "owner": owner, "address": address},
                upsert=True,
            )
        self._cache = None
        # After the writes: a replica that sees the new count reads the new documents.
        await self._shared.bump()
        await self.changed()
        return len(specs)

    @property
    def followed_at(self) -> float:
        """When (time.monotonic()) the shared registration counter was last read."""
        return self._shared.followed_at

    async def follow_store(self) -> None:
        """Follows the shared registration counter for the replica's life: when another
        replica has registered, or a read of the counter fails (a change may go unseen then),
        the copy is dropped and the watchers told."""
        await self._shared.follow(self._dropped)

    async def _dropped(self) -> None:
        self._cache = None
        await self.changed()

    def _held(self, now: float) -> list[Document] | None:
        if self._cache is None:
            return None
        read_at, docs = self._cache
        if now - read_at <= CACHE_S:
            return docs
        return docs if self._shared.trusts(read_at, now) else None

    async def changed(self) -> None:
        """Tells the watchers (engine workers holding pools) that a pool may have changed: a
        registration, a client's tools, an MCP server that came or went."""
        self._generation += 1
        async with self._changed:
            self._changed.notify_all()

    async def changes(self) -> AsyncIterator[int]:
        """The generation now, then after each registration (several may fold into one)."""
        seen = -1
        while True:
            async with self._changed:
                while self._generation == seen:
                    await self._changed.wait()
                seen = self._generation
            yield seen

    async def list(self, profile: str = "") -> list[Document]:
        docs = self._held(time.monotonic())
        if docs is None:
            async with self._reading:
                now = time.monotonic()
                docs = self._held(now)
                if docs is None:
                    generation = self._generation
                    docs = await self._tools.find({}).to_list(None)
                    # A registration that landed during the read may be missing from it: don't
                    # keep it.
                    if generation == self._generation:
                        self._cache = (now, docs)
        return [
            d
            for d in docs
            if not profile or not d.get("allowed_profiles") or profile in d["allowed_profiles"]
        ]

    async def find(self, name: str) -> Document | None:
        found: Document | None = await self._tools.find_one({"_id": name})
        return found

    async def invoke(self, doc: Document, request: tpb.InvokeToolRequest) -> tpb.InvokeToolResponse:
        # A tool that waits for other work (process_create_delegate's fallback) registers
        # a longer bound than the default.
        timeout_s = int(doc.get("timeout_ms") or 0) / 1000 or INVOKE_TIMEOUT_S
        return await self.call_host(str(doc.get("address") or ""), request, timeout_s)

    async def call_host(
        self, address: str, request: tpb.InvokeToolRequest, timeout_s: float, *, what: str = ""
    ) -> tpb.InvokeToolResponse:
        """Asks the ToolHost at `address`; every failure comes back as a result. `what` names
        the host in errors (default: the tool)."""
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = authed_channel(address, self._credential)
        what = what or request.tool_name
        try:
            response: tpb.InvokeToolResponse = await tool_pb2_grpc.ToolHostServiceStub(
                channel
            ).Invoke(request, timeout=timeout_s)
            return response
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return tpb.InvokeToolResponse(
                    status=pb.TOOL_CALL_STATUS_TIMEOUT,
                    error=f"{what} did not answer within {timeout_s:.0f}s",
                )
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                return error(f"UNAVAILABLE: {what} is unreachable ({exc.details()})")
            return error(f"{request.tool_name} failed: {exc.details()}")
        except (TimeoutError, OSError) as exc:
            return error(f"UNAVAILABLE: {what} is unreachable: {exc}")

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()


def error(message: str) -> tpb.InvokeToolResponse:
    return tpb.InvokeToolResponse(status=pb.TOOL_CALL_STATUS_ERROR, error=message)
