"""Token checks that need more than the signature: revocation (logout, an admin's revoke).

session_service keeps the record (session_service/access/token_service.py); the gateway caches
each user's record for CACHE_S seconds. A token revoked through this gateway stops working at
once here; through another gateway instance it may still work here for up to CACHE_S seconds.
If session_service cannot be reached, a cached record is used, else the token is taken as valid
(a session_service outage must not log everyone out; the token still expires)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import grpc

from gateway.auth import Principal, Tokens
from vance.errors import UnauthenticatedError
from vance.v1 import tokens_pb2 as tpb
from vance.v1 import tokens_pb2_grpc

logger = logging.getLogger(__name__)

CACHE_S = 5.0
_MAX_CACHED = 10_000


class Authenticator:
    def __init__(
        self, tokens: Tokens, stub: Callable[[], tokens_pb2_grpc.TokenServiceAsyncStub]
    ) -> None:
        self.tokens = tokens
        self._stub = stub
        self._cache: dict[tuple[str, str], tuple[float, tpb.TokenRevocations]] = {}

    async def authenticate(self, token: str) -> Principal:
        """Signature, expiry, then revocation; UnauthenticatedError (`bad_token`,
        `token_revoked`) otherwise."""
        p = self.tokens.verify(token)
        await self.check(p)
        return p

    async def check(self, p: Principal) -> None:
        record = await self._record(p.tenant_id, p.username)
        if p.issued_at_ms < record.revoked_before_ms or p.token_id in record.token_ids:
            raise UnauthenticatedError("the token was revoked", reason="token_revoked")

    async def revoke(self, p: Principal) -> None:
        """This one token (logout)."""
        await self._store(
            tpb.RevokeTokensRequest(
                tenant_id=p.tenant_id,
                username=p.username,
                token_id=p.token_id,
                expires_at_ms=p.expires_at_ms,
            )
        )

    async def revoke_all(self, tenant: str, username: str) -> None:
        """Every token of the user issued until now (an admin's action)."""
        await self._store(tpb.RevokeTokensRequest(tenant_id=tenant, username=username, all=True))

    async def _store(self, request: tpb.RevokeTokensRequest) -> None:
        record = await self._stub().RevokeTokens(request)
        self._cache[(request.tenant_id, request.username)] = (time.monotonic(), record)

    async def _record(self, tenant: str, username: str) -> tpb.TokenRevocations:
        key = (tenant, username)
        cached = self._cache.get(key)
        if cached is not None and time.monotonic() - cached[0] < CACHE_S:
            return cached[1]
        try:
            record: tpb.TokenRevocations = await self._stub().GetTokenRevocations(
                tpb.GetTokenRevocationsRequest(tenant_id=tenant, username=username), timeout=2
            )
        except grpc.aio.AioRpcError as exc:
            logger.warning("token revocations of %s unreadable: %s", username, exc.code().name)
            return cached[1] if cached is not None else tpb.TokenRevocations()
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()
        self._cache[key] = (time.monotonic(), record)
        return record
