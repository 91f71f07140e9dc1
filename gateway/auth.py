"""Login tokens: HS256 JWTs signed with the configured (or generated) secret."""

from __future__ import annotations

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
        self._ttl_s = ttl_s

    def issue(self, p: Principal) -> str:
        now = int(time.time())
        claims = {
            "sub": p.username,
            "tenant": p.tenant_id,
            "roles": list(p.roles),
            "iat": now,
            "exp": now + self._ttl_s,
        }
        return jwt.encode(claims, self._secret, algorithm="HS256")

    def verify(self, token: str) -> Principal:
        try:
            claims = jwt.decode(token, self._secret, algorithms=["HS256"])
        except jwt.PyJWTError as exc:
            raise UnauthenticatedError(f"invalid token: {exc}", reason="bad_token") from exc
        # From here on, the gRPC calls this request (or socket) makes carry the user's token,
        # so the services act as the user (vance/authclient.py).
        on_behalf_of.set(token)
        return Principal(str(claims["tenant"]), str(claims["sub"]), tuple(claims.get("roles", [])))


def bearer(header: str | None, query_token: str | None) -> str:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    if query_token:
        return query_token
    raise UnauthenticatedError("a bearer token is required", reason="token_required")
