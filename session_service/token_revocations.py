"""TokenService: the record of revoked login tokens, one document per user in
`token_revocations` (`revokedBeforeMs` for "every token issued before", and single token ids
with their expiry, forgotten once they would have expired anyway). The gateway caches what it
reads here for a few seconds (docs/protocol.md, "Refresh and revocation")."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from vance.clock import Clock
from vance.errors import InvalidArgumentError, grpc_errors
from vance.store import Document
from vance.v1 import tokens_pb2 as tpb
from vance.v1 import tokens_pb2_grpc


class TokenRevocationStore:
    def __init__(self, db: AsyncDatabase[Document], clock: Clock) -> None:
        self.docs = db["token_revocations"]
        self.clock = clock

    @staticmethod
    def _key(tenant: str, username: str) -> str:
        return f"{tenant}:{username}"

    async def revoke(self, tenant: str, username: str, token_id: str, expires_at_ms: int) -> None:
        key = self._key(tenant, username)
        now = self.clock.now_ms()
        # Two writes, so the list never grows with tokens that expired on their own.
        await self.docs.update_one(
            {"_id": key}, {"$pull": {"tokens": {"expiresAtMs": {"$lt": now}}}}
        )
        await self.docs.update_one(
            {"_id": key},
            {"$addToSet": {"tokens": {"id": token_id, "expiresAtMs": expires_at_ms}}},
            upsert=True,
        )

    async def revoke_all(self, tenant: str, username: str) -> None:
        await self.docs.update_one(
            {"_id": self._key(tenant, username)},
            {"$max": {"revokedBeforeMs": self.clock.now_ms()}, "$set": {"tokens": []}},
            upsert=True,
        )

    async def get(self, tenant: str, username: str) -> tpb.TokenRevocations:
        doc = await self.docs.find_one({"_id": self._key(tenant, username)}) or {}
        now = self.clock.now_ms()
        tokens = [t for t in doc.get("tokens", []) if int(t.get("expiresAtMs", 0)) >= now]
        return tpb.TokenRevocations(
            revoked_before_ms=int(doc.get("revokedBeforeMs", 0)),
            token_ids=[str(t["id"]) for t in tokens],
        )


class TokenServicer(tokens_pb2_grpc.TokenServiceServicer):
    def __init__(self, store: TokenRevocationStore) -> None:
        self.store = store

    @grpc_errors
    async def RevokeTokens(
        self, request: tpb.RevokeTokensRequest, context: Any
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
        self, request: tpb.GetTokenRevocationsRequest, context: Any
    ) -> tpb.TokenRevocations:
        return await self.store.get(request.tenant_id, request.username)
