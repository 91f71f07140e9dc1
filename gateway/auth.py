"""Login tokens: HS256 JWTs signed with the configured (or generated) secret."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import jwt

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
    survive restarts of the embedded default."""
    if config.gateway.jwt_secret:
        return config.gateway.jwt_secret
    path = Path(config.data_dir) / "jwt-secret"
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    path.write_text(secret)
    path.chmod(0o600)
    return secret


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
        return Principal(str(claims["tenant"]), str(claims["sub"]), tuple(claims.get("roles", [])))


def bearer(header: str | None, query_token: str | None) -> str:
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    if query_token:
        return query_token
    raise UnauthenticatedError("a bearer token is required", reason="token_required")
