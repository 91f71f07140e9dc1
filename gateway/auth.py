"""Login tokens: HS256 JWTs signed with the configured (or generated) secret.

Each token carries a random `jti` and its issue time `iat` (ms precision in `iat_ms`), so a
single token (logout) or every token of a user issued before a moment (an admin's revoke) can
be revoked; gateway/revocations.py checks that record."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import jwt

from vance.auth import on_behalf_of, user_secret
from vance.config import Config
from vance.errors import UnauthenticatedError


@dataclass(frozen=True)
class Principal:
    tenant_id: str
    username: str
    roles: tuple[str, ...]
    token_id: str = ""  # the token's `jti`
    issued_at_ms: int = 0
    expires_at_ms: int = 0

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles


def load_secret(config: Config) -> str:
    """The configured secret, or one generated once and kept in the data directory, so tokens
    survive restarts of the embedded default; the services verify tokens with the same one."""
    return user_secret(config)


class Tokens:
    def __init__(self, secret: str, ttl_s: int) -> None:
        self._secret = secret
        self.ttl_s = ttl_s

    def issue(self, p: Principal) -> str:
        now_ms = int(time.time() * 1000)
        claims = {
            "sub": p.username,
            "tenant": p.tenant_id,
            "roles": list(p.roles),
            "jti": secrets.token_urlsafe(12),
            "iat": now_ms // 1000,
            "iat_ms": now_ms,
            "exp": now_ms // 1000 + self.ttl_s,
        }
        return jwt.encode(claims, self._secret, algorithm="HS256")

    def verify(self, token: str) -> Principal:
        """Signature and expiry only; revocation is gateway/revocations.py's (it needs a call)."""
        try:
            claims = jwt.decode(token, self._secret, algorithms=["HS256"])
        except jwt.PyJWTError as exc:
            raise UnauthenticatedError(f"invalid token: {exc}", reason="bad_token") from exc
        try:
            principal = Principal(
                str(claims["tenant"]),
                str(claims["sub"]),
                tuple(str(r) for r in claims.get("roles", [])),
                token_id=str(claims.get("jti", "")),
                issued_at_ms=int(claims.get("iat_ms", int(claims.get("iat", 0)) * 1000)),
                expires_at_ms=int(claims.get("exp", 0)) * 1000,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UnauthenticatedError("invalid token: bad claims", reason="bad_token") from exc
        # From here on, the gRPC calls this request (or socket) makes carry the user's token,
        # so the services act as the user (vance/authclient.py).
        on_behalf_of.set(token)
        return principal


def bearer(header: str | None, query_token: str | None) -> str:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    if query_token:
        return query_token
    raise UnauthenticatedError("a bearer token is required", reason="token_required")
