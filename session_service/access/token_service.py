"""TokenService: the record of revoked login tokens, one document per user in
`token_revocations` (`revokedBeforeMs` for "every token issued before", and single token ids
with their expiry, forgotten once they would have expired anyway). The gateway caches what it
reads here for a few seconds (docs/protocol.md, "Refresh and revocation"); every gRPC service
keeps a snapshot of all records, refreshed from `ListTokenRevocationsSince` (vance/revocations.py).
`updatedAtMs` marks each write so that refresh reads only what changed.

Every service asks every `auth.revocation_refresh_s` (a second), so the refresh is a steady
cost of an open system whatever it does: three store reads a second with the shipped services.
A sole session_service replica writes every record itself, so it keeps a copy of the records
in memory (read once, then kept current by its own writes) and answers the refresh from it: a
revocation is in every answer from the moment its write returns. A writer the configuration
does not know of (the old pod of a rolling update, a replica started by hand) is caught by
re-reading what changed every RECONCILE_S: one store read per RECONCILE_S instead of one per
refresh of every process. With several replicas each refresh reads the store as before."""

from __future__ import annotations

import asyncio
import time

import grpc

from session_service.store.raw import Bson, Db
from vance.clock import Clock
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import tokens_internal_pb2 as tipb
from vance.internal.v1 import tokens_internal_pb2_grpc
from vance.revocations import OVERLAP_MS
from vance.v1 import tokens_pb2 as tpb
from vance.v1 import tokens_pb2_grpc

# How often a sole replica's copy re-reads the records changed since its last read.
RECONCILE_S = 10.0


class TokenRevocationStore:
    def __init__(self, db: Db, clock: Clock, *, sole_writer: bool = False) -> None:
        """`sole_writer`: no other replica writes these records (one session_service), so
        `changed_since` answers from a copy kept in memory."""
        self.docs = db["token_revocations"]
        self.clock = clock
        self._sole_writer = sole_writer
        self._copy: dict[str, Bson] | None = None  # _id -> record; None: not read yet
        self._load = asyncio.Lock()
        self._writes = 0  # this replica's writes so far: a load they overlapped is redone
        self._read_ms = 0  # service clock at the copy's last store read
        self._read_at = 0.0  # time.monotonic() then

    @staticmethod
    def _key(tenant: str, username: str) -> str:
        return f"{tenant}:{username}"

    @staticmethod
    def _who(tenant: str, username: str, now: int) -> Bson:
        return {"tenantId": tenant, "username": username, "updatedAtMs": now}

    async def revoke(self, tenant: str, username: str, token_id: str, expires_at_ms: int) -> None:
        key = self._key(tenant, username)
        now = self.clock.now_ms()
        # Two writes, so the list never grows with tokens that expired on their own.
        await self.docs.update_one(
            {"_id": key}, {"$pull": {"tokens": {"expiresAtMs": {"$lt": now}}}}
        )
        await self.docs.update_one(
            {"_id": key},
            {
                "$addToSet": {"tokens": {"id": token_id, "expiresAtMs": expires_at_ms}},
                "$set": self._who(tenant, username, now),
            },
            upsert=True,
        )
        await self._wrote(key)

    async def revoke_all(self, tenant: str, username: str) -> None:
        now = self.clock.now_ms()
        key = self._key(tenant, username)
        await self.docs.update_one(
            {"_id": key},
            {
                "$max": {"revokedBeforeMs": now},
                "$set": {**self._who(tenant, username, now), "tokens": []},
            },
            upsert=True,
        )
        await self._wrote(key)

    async def _wrote(self, key: str) -> None:
        """The record as this write left it goes into the copy (when one is kept)."""
        self._writes += 1
        if self._copy is None:
            return
        # Under the lock: reads issued one after the other return ever later states, so a
        # slower read of an earlier write never puts an older record back.
        async with self._load:
            try:
                doc = await self.docs.find_one({"_id": key})
            except BaseException:
                self._copy = None  # read everything again rather than miss this write
                raise
            if doc is not None and self._copy is not None:
                self._copy[key] = doc

    async def _records(self, since_ms: int) -> list[Bson]:
        if not self._sole_writer:
            query: Bson = {} if since_ms <= 0 else {"updatedAtMs": {"$gte": since_ms}}
            return [doc async for doc in self.docs.find(query)]
        async with self._load:
            while self._copy is None:
                writes, read_ms = self._writes, self.clock.now_ms()
                loaded = {str(doc["_id"]): doc async for doc in self.docs.find({})}
                if writes == self._writes:  # else a write may have missed it: read again
                    self._copy = loaded
                    self._read_ms, self._read_at = read_ms, time.monotonic()
            if time.monotonic() - self._read_at >= RECONCILE_S:
                read_ms = self.clock.now_ms()
                query = {"updatedAtMs": {"$gte": self._read_ms - OVERLAP_MS}}
                async for doc in self.docs.find(query):
                    self._copy[str(doc["_id"])] = doc
                self._read_ms, self._read_at = read_ms, time.monotonic()
        if since_ms <= 0:
            return list(self._copy.values())
        return [d for d in self._copy.values() if int(d.get("updatedAtMs", 0)) >= since_ms]

    async def get(self, tenant: str, username: str) -> tpb.TokenRevocations:
        doc = await self.docs.find_one({"_id": self._key(tenant, username)}) or {}
        return self._record(doc, self.clock.now_ms())

    @staticmethod
    def _record(doc: Bson, now: int) -> tpb.TokenRevocations:
        tokens = [t for t in doc.get("tokens", []) if int(t.get("expiresAtMs", 0)) >= now]
        return tpb.TokenRevocations(
            revoked_before_ms=int(doc.get("revokedBeforeMs", 0)),
            token_ids=[str(t["id"]) for t in tokens],
        )

    async def changed_since(self, since_ms: int) -> tipb.ListTokenRevocationsSinceResponse:
        """Every record written at or after `since_ms` (0: all of them)."""
        now = self.clock.now_ms()
        users = []
        for doc in await self._records(since_ms):
            # Records written before `updatedAtMs` existed carry their names only in the key.
            tenant, _, username = str(doc["_id"]).partition(":")
            users.append(
                tipb.UserTokenRevocations(
                    tenant_id=str(doc.get("tenantId", tenant)),
                    username=str(doc.get("username", username)),
                    revocations=self._record(doc, now),
                )
            )
        return tipb.ListTokenRevocationsSinceResponse(users=users, as_of_ms=now)


class TokenServicer(
    tokens_pb2_grpc.TokenServiceServicer, tokens_internal_pb2_grpc.TokenInternalServiceServicer
):
    """The public TokenService and the service-only revocation feed (vance.internal.v1)."""

    def __init__(self, store: TokenRevocationStore) -> None:
        self.store = store

    @grpc_errors
    async def RevokeTokens(
        self,
        request: tpb.RevokeTokensRequest,
        context: grpc.aio.ServicerContext[tpb.RevokeTokensRequest, tpb.TokenRevocations],
    ) -> tpb.TokenRevocations:
        if not request.tenant_id or not request.username:
            raise InvalidArgumentError("tenant_id and username are required")
        if request.all:
            await self.store.revoke_all(request.tenant_id, request.username)
        elif request.token_id:
            await self.store.revoke(
                request.tenant_id, request.username, request.token_id, request.expires_at_ms
            )
        else:
            raise InvalidArgumentError("name a token_id or set all", reason="token_id_required")
        return await self.store.get(request.tenant_id, request.username)

    @grpc_errors
    async def GetTokenRevocations(
        self,
        request: tpb.GetTokenRevocationsRequest,
        context: grpc.aio.ServicerContext[tpb.GetTokenRevocationsRequest, tpb.TokenRevocations],
    ) -> tpb.TokenRevocations:
        return await self.store.get(request.tenant_id, request.username)

    @grpc_errors
    async def ListTokenRevocationsSince(
        self,
        request: tipb.ListTokenRevocationsSinceRequest,
        context: grpc.aio.ServicerContext[
            tipb.ListTokenRevocationsSinceRequest, tipb.ListTokenRevocationsSinceResponse
        ],
    ) -> tipb.ListTokenRevocationsSinceResponse:
        return await self.store.changed_since(request.since_ms)
