"""Credentials on every gRPC call: who a call comes from, and how a caller proves it.

Two kinds of bearer token travel in the `authorization` metadata (`Bearer <jwt>`):

- a user token: the HS256 JWT the gateway issues at login (claims sub, tenant, roles), signed
  with the JWT secret; a call made on behalf of that user carries it;
- a service token: an HS256 JWT with `kid: service` in its header, signed with the service
  secret; the services, the engine workers and trusted platform clients carry it.

Both secrets are configured or generated once and kept in the data directory, so every process
of one installation shares them (docs/operations.md, "gRPC credentials"). A verified token is
cached for a short while, so the hot path pays a dictionary lookup, not an HMAC, per call.
"""

from __future__ import annotations

import contextvars
import os
import secrets
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from vance.config import Config

SERVICE_KID = "service"
_CACHE_MAX = 4096


@dataclass(frozen=True)
class Identity:
    """The verified caller of one RPC."""

    kind: str  # "service" or "user"
    name: str  # the service (or platform client) name, or the username
    tenant_id: str = ""
    roles: tuple[str, ...] = ()

    @property
    def is_service(self) -> bool:
        return self.kind == "service"

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles


# The verified caller of the RPC being served (set by vance/authz.py's server interceptor).
current_identity: contextvars.ContextVar[Identity | None] = contextvars.ContextVar(
    "vance_identity", default=None
)
# The user token outgoing calls carry instead of the service token: the gateway sets it when it
# has verified a request's or a socket's token, so every call made for that user carries it.
on_behalf_of: contextvars.ContextVar[str] = contextvars.ContextVar("vance_on_behalf_of", default="")


def load_or_create_secret(path: Path) -> str:
    """The secret kept at `path`, generated on first use. Several processes may start at once:
    the file appears atomically (written aside, then linked into place), so all read one value."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.write(fd, secrets.token_urlsafe(48).encode())
        os.fchmod(fd, 0o600)
        os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process won the race: use its secret
    finally:
        os.unlink(tmp)
    return path.read_text().strip()


def user_secret(config: Config) -> str:
    if config.gateway.jwt_secret:
        return config.gateway.jwt_secret
    return load_or_create_secret(Path(config.data_dir) / "jwt-secret")


def service_secret(config: Config) -> str:
    if config.auth.service_secret:
        return config.auth.service_secret
    return load_or_create_secret(Path(config.data_dir) / "service-secret")


def mint_service_token(secret: str, name: str, ttl_s: int) -> str:
    now = int(time.time())
    claims = {"sub": name, "typ": "service", "iat": now, "exp": now + ttl_s}
    return jwt.encode(claims, secret, algorithm="HS256", headers={"kid": SERVICE_KID})


def never_revoked(claims: Mapping[str, Any]) -> bool:
    """The revocation hook's default. A revocation record (kept by session_service) is consulted
    here once it exists; verified tokens are cached for `auth.cache_s`, which bounds how long a
    revoked token keeps working on a service."""
    return False


class Verifier:
    """Checks bearer tokens; remembers good ones for `cache_s` (never past their expiry)."""

    def __init__(
        self,
        user_key: str,
        service_key: str,
        *,
        cache_s: float = 30.0,
        is_revoked: Callable[[Mapping[str, Any]], bool] = never_revoked,
    ) -> None:
        self._user_key = user_key
        self._service_key = service_key
        self._cache_s = cache_s
        self._cache: dict[str, tuple[Identity, float]] = {}
        self.is_revoked = is_revoked

    @classmethod
    def from_config(cls, config: Config) -> Verifier:
        return cls(user_secret(config), service_secret(config), cache_s=config.auth.cache_s)

    def verify(self, token: str) -> Identity | None:
        """The token's identity, or None when it is malformed, forged, expired or revoked."""
        now = time.time()
        hit = self._cache.get(token)
        if hit is not None and hit[1] > now:
            return hit[0]
        try:
            header = jwt.get_unverified_header(token)
            service = header.get("kid") == SERVICE_KID
            claims = jwt.decode(
                token,
                self._service_key if service else self._user_key,
                algorithms=["HS256"],
                options={"require": ["exp", "sub"]},
            )
        except jwt.PyJWTError:
            return None
        if self.is_revoked(claims):
            return None
        if service:
            if claims.get("typ") != "service":
                return None
            identity = Identity("service", str(claims["sub"]))
        else:
            roles = claims.get("roles", [])
            if not isinstance(roles, list) or not claims.get("tenant"):
                return None
            identity = Identity("user", str(claims["sub"]), str(claims["tenant"]), tuple(roles))
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[token] = (identity, min(now + self._cache_s, float(claims["exp"])))
        return identity


class ServiceCredential:
    """This process's own service token, minted on first use and renewed at half its life."""

    def __init__(self, secret: str, name: str, ttl_s: int) -> None:
        self._secret = secret
        self._name = name
        self._ttl_s = ttl_s
        self._header = ""
        self._renew_at = 0.0

    @classmethod
    def from_config(cls, config: Config, name: str) -> ServiceCredential:
        return cls(service_secret(config), name, config.auth.service_token_ttl_s)

    def header(self) -> str:
        now = time.time()
        if now >= self._renew_at:
            token = mint_service_token(self._secret, self._name, self._ttl_s)
            self._header = f"Bearer {token}"
            self._renew_at = now + self._ttl_s / 2
        return self._header


def bearer_token(metadata: Any) -> str:
    """The token of an `authorization: Bearer ...` entry in gRPC metadata; empty if none."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str):
            if value[:7].lower() == "bearer ":
                return value[7:].strip()
            return ""
    return ""
