"""REST routes for tenant and project settings (seed 002: the `vance.session.*` keys). Any
user of the tenant may read them (they decide how that user's sessions behave); only tenant
admins write, except a user's own hub project, where its owner sets the user-level keys
(`chat.language`; `/me/settings`). Another user's hub project is 404 for everyone, admins
included. session_service validates keys and values (400 unknown_setting / invalid_setting)
and checks who may write (session_service/settings/permissions.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from gateway.rest_deps import PathId, admin, caller, clients, principal
from vance.v1 import session_pb2 as spb

router = APIRouter(tags=["settings"])


class SettingsView(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    tenant_id: str = Field(alias="tenantId")
    project_id: str | None = Field(None, alias="projectId")
    values: dict[str, str] = Field(description="set at this level")
    effective: dict[str, str] = Field(description="tenant values overlaid by the project's")


class SettingsPatch(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    set: dict[Annotated[str, Field(max_length=200)], Annotated[str, Field(max_length=1000)]] = (
        Field(default_factory=dict, max_length=100, description="key -> value, as text")
    )
    unset: list[Annotated[str, Field(max_length=200)]] = Field(
        default_factory=list, max_length=100, description="keys to remove at this level"
    )


def _view(s: spb.Settings) -> SettingsView:
    return SettingsView(
        tenant_id=s.tenant_id,
        project_id=s.project_id or None,
        values=dict(s.values),
        effective=dict(s.effective),
    )


async def _get(request: Request, tenant: PathId, project: PathId) -> SettingsView:
    p = await principal(request, tenant)
    return _view(
        await clients(request).sessions.GetSettings(
            spb.GetSettingsRequest(tenant_id=tenant, project_id=project, caller=caller(p))
        )
    )


async def _patch(
    request: Request, tenant: PathId, project: PathId, body: SettingsPatch
) -> SettingsView:
    p = await (principal(request, tenant) if project else admin(request, tenant))
    return _view(
        await clients(request).sessions.UpdateSettings(
            spb.UpdateSettingsRequest(
                tenant_id=tenant,
                project_id=project,
                caller=caller(p),
                set=body.set,
                unset=body.unset,
            )
        )
    )


@router.get("/brain/{tenant}/settings", response_model=SettingsView)
async def get_tenant_settings(request: Request, tenant: PathId) -> SettingsView:
    return await _get(request, tenant, "")


@router.patch("/brain/{tenant}/settings", response_model=SettingsView)
async def patch_tenant_settings(
    request: Request, tenant: PathId, body: SettingsPatch
) -> SettingsView:
    """Tenant admins only; applies `set`, then removes `unset`; idempotent."""
    return await _patch(request, tenant, "", body)


@router.get("/brain/{tenant}/project/{project}/settings", response_model=SettingsView)
async def get_project_settings(request: Request, tenant: PathId, project: PathId) -> SettingsView:
    return await _get(request, tenant, project)


@router.patch("/brain/{tenant}/project/{project}/settings", response_model=SettingsView)
async def patch_project_settings(
    request: Request, tenant: PathId, project: PathId, body: SettingsPatch
) -> SettingsView:
    """Tenant admins only; a project value wins over the tenant's for that project's sessions
    (not vance.session.forced-floor-ms, which is tenant-wide)."""
    return await _patch(request, tenant, project, body)


@router.get("/brain/{tenant}/me/settings", response_model=SettingsView)
async def get_my_settings(request: Request, tenant: PathId) -> SettingsView:
    """The caller's user level: the settings of their hub project `_user_<username>`."""
    p = await principal(request, tenant)
    return await _get(request, tenant, f"_user_{p.username}")


@router.patch("/brain/{tenant}/me/settings", response_model=SettingsView)
async def patch_my_settings(request: Request, tenant: PathId, body: SettingsPatch) -> SettingsView:
    """The user's own user-level keys (`chat.language`); no admin role needed."""
    p = await principal(request, tenant)
    return await _patch(request, tenant, f"_user_{p.username}", body)
