"""The tool registry (in the store, so every replica sees one) and invocation routing."""

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
from vance.store import Document
from vance.v1 import common_pb2 as pb

logger = logging.getLogger(__name__)

INVOKE_TIMEOUT_S = 60.0
CACHE_S = 2.0


class ToolRegistry:
    def __init__(self, db: AsyncDatabase[Document], credential: ServiceCredential) -> None:
        self._tools = db["tools"]
        self._credential = credential  # tool hosts check it like every service (vance/authz.py)
        self._channels: dict[str, grpc.aio.Channel] = {}
        # Every turn resolves a pool; the registry changes only when a service starts.
        self._cache: tuple[float, list[Document]] | None = None
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
        await self.changed()
        return len(specs)

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
        now = time.monotonic()
        if self._cache is not None and now - self._cache[0] <= CACHE_S:
            docs = self._cache[1]
        else:
            generation = self._generation
            docs = await self._tools.find({}).to_list(None)
            # A registration that landed during the read may be missing from it: don't keep it.
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
