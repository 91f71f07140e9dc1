"""REST routes for tokens: login, refresh, logout, and an admin's revoke of a user's tokens
(docs/protocol.md, "Tokens")."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from gateway.auth import Principal, Tokens
from gateway.rest_deps import PathId, admin, clients, principal
from gateway.revocations import Authenticator
from vance.internal.v1 import session_internal_pb2 as sipb

router = APIRouter(tags=["access"])


class LoginBody(BaseModel):
    model_config = ConfigDict(strict=True)

    password: str = Field(max_length=1024)


class TokenView(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    token: str
    user_id: str = Field(alias="userId")
    tenant_id: str = Field(alias="tenantId")
    expires_at: int = Field(alias="expiresAt", description="ms since the epoch")


class RevokedView(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    tenant_id: str = Field(alias="tenantId")
    username: str
    revoked: bool = True


def _issue(request: Request, p: Principal) -> TokenView:
    tokens: Tokens = request.app.state.tokens
    token = tokens.issue(p)
    fresh = tokens.verify(token)
    return TokenView(
        token=token, user_id=p.username, tenant_id=p.tenant_id, expires_at=fresh.expires_at_ms
    )


def _auth(request: Request) -> Authenticator:
    auth: Authenticator = request.app.state.authenticator
    return auth


# Declared before the login route, whose `{username}` would otherwise take "refresh".
@router.post("/brain/{tenant}/access/refresh", response_model=TokenView)
async def refresh(request: Request, tenant: PathId) -> TokenView:
    """A valid, unrevoked bearer token in; a new token with a full lifetime out. The old token
    stays valid until it expires or is revoked."""
    p = await principal(request, tenant)
    return _issue(request, Principal(p.tenant_id, p.username, p.roles))


@router.post("/brain/{tenant}/access/logout", response_model=dict[str, bool])
async def logout(request: Request, tenant: PathId) -> dict[str, bool]:
    """Revokes the bearer token itself."""
    p = await principal(request, tenant)
    await _auth(request).revoke(p)
    return {"revoked": True}


@router.post("/brain/{tenant}/access/{username}", response_model=TokenView)
async def login(request: Request, tenant: PathId, username: PathId, body: LoginBody) -> TokenView:
    user = await clients(request).sessions_internal.Authenticate(
        sipb.AuthenticateRequest(tenant_id=tenant, username=username, password=body.password)
    )
    return _issue(request, Principal(user.tenant_id, user.username, tuple(user.roles)))


@router.post(
    "/brain/{tenant}/admin/users/{username}/revoke-tokens",
    response_model=RevokedView,
)
async def revoke_user_tokens(request: Request, tenant: PathId, username: PathId) -> RevokedView:
    """Tenant admins only: every token of the user issued until now stops working (open
    sockets are closed on their next frame)."""
    await admin(request, tenant)
    await _auth(request).revoke_all(tenant, username)
    return RevokedView(tenant_id=tenant, username=username)
