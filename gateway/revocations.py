"""Token checks that need more than the signature: revocation (logout, an admin's revoke).

session_service keeps the record (session_service/access/token_service.py); the gateway keeps a
snapshot of every user's record, as every gRPC service does (vance/revocations.py), refreshed
from ListTokenRevocationsSince every `auth.revocation_refresh_s` (2 s): one read per refresh for
the whole replica, where a per-user cache read each active user's record every few seconds (at
200 users chatting, 0.3 store reads per turn). A token revoked through this gateway stops
working at once here; through another gateway replica it may still work here for about one
refresh. If session_service cannot be reached, the last snapshot stays in force (a session_service
outage must not log everyone out; the token still expires)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from gateway.auth import Principal, Tokens
from vance.errors import UnauthenticatedError
from vance.revocations import RevocationSnapshot, RevocationWatch, Source
from vance.v1 import tokens_pb2 as tpb
from vance.v1 import tokens_pb2_grpc

logger = logging.getLogger(__name__)


class Authenticator:
    def __init__(
        self,
        tokens: Tokens,
        stub: Callable[[], tokens_pb2_grpc.TokenServiceAsyncStub],
        source: Source,
        refresh_s: float,
    ) -> None:
        self.tokens = tokens
        self._stub = stub
        self.snapshot = RevocationSnapshot()
        # Started and stopped with the app (gateway/app.py lifespan).
        self.watch = RevocationWatch(source, self.snapshot, refresh_s)

    async def authenticate(self, token: str) -> Principal:
        """Signature, expiry, then revocation; UnauthenticatedError (`bad_token`,
        `token_revoked`) otherwise."""
        p = self.tokens.verify(token)
        await self.check(p)
        return p

    async def check(self, p: Principal) -> None:
        if self.snapshot.revoked(p.tenant_id, p.username, p.token_id, p.issued_at_ms):
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
        self.snapshot.put(
            request.tenant_id, request.username, record.revoked_before_ms, list(record.token_ids)
        )
