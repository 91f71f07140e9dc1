"""What every REST route needs: the caller (bearer token of the path's tenant, not revoked),
the gRPC clients, and the declared shape of path parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request

from gateway.auth import Principal, bearer
from gateway.clients import Clients
from gateway.errors import GatewayError
from gateway.limits import MAX_ID_CHARS
from gateway.revocations import Authenticator
from vance.v1 import session_pb2 as spb

# Path ids are bounded before any call: a 100 KB id would otherwise reach a service and come
# back inside an error message too large for gRPC's headers.
PathId = Annotated[str, Path(max_length=MAX_ID_CHARS)]


async def principal(request: Request, tenant: str) -> Principal:
    """401 without a valid token, 403 for a token of another tenant."""
    auth: Authenticator = request.app.state.authenticator
    token = bearer(request.headers.get("authorization"), request.query_params.get("token"))
    p = await auth.authenticate(token)
    if p.tenant_id != tenant:
        raise GatewayError(403, "the token is for another tenant", "tenant_mismatch")
    return p


async def admin(request: Request, tenant: str) -> Principal:
    p = await principal(request, tenant)
    if not p.is_admin:
        raise GatewayError(403, "tenant admins only", "admin_required")
    return p


def clients(request: Request) -> Clients:
    found: Clients = request.app.state.clients()
    return found


def caller(p: Principal) -> spb.Caller:
    return spb.Caller(user_id=p.username, roles=list(p.roles))
