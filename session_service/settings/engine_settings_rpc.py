"""The engine settings RPCs of SessionService (session_service/settings/engine_settings.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from session_service.settings.engine_settings import (
    GROUP,
    PROCESS,
    PROJECT,
    SESSION,
    TENANT,
    EngineSettings,
    Resolved,
    Scope,
)
from vance.errors import InvalidArgumentError, grpc_errors
from vance.internal.v1 import session_internal_pb2 as sipb

_LEVELS: dict[int, str] = {
    sipb.SETTING_LEVEL_PROCESS: PROCESS,
    sipb.SETTING_LEVEL_SESSION: SESSION,
    sipb.SETTING_LEVEL_PROJECT: PROJECT,
    sipb.SETTING_LEVEL_TENANT: TENANT,
    sipb.SETTING_LEVEL_GROUP: GROUP,
}
_BACK = {v: k for k, v in _LEVELS.items()}


def _scope(s: sipb.SettingScope) -> Scope:
    return Scope(s.tenant_id, s.project_id, s.session_id, s.process_id)


def _out(values: dict[str, Resolved]) -> sipb.EngineSettings:
    return sipb.EngineSettings(
        values=[
            sipb.EngineSettingValue(key=r.key, value=r.value, level=_BACK[r.level])  # type: ignore[arg-type]
            for r in values.values()
        ]
    )


class EngineSettingsRpcs:
    engine_settings: EngineSettings

    @grpc_errors
    async def ResolveEngineSettings(
        self,
        request: sipb.ResolveEngineSettingsRequest,
        context: grpc.aio.ServicerContext[sipb.ResolveEngineSettingsRequest, sipb.EngineSettings],
    ) -> sipb.EngineSettings:
        return _out(await self.engine_settings.resolve(_scope(request.scope), list(request.keys)))

    async def WatchSettings(
        self,
        request: sipb.WatchSettingsRequest,
        context: grpc.aio.ServicerContext[sipb.WatchSettingsRequest, sipb.SettingsChange],
    ) -> AsyncIterator[sipb.SettingsChange]:
        async for generation in self.engine_settings.docs.changes():
            yield sipb.SettingsChange(generation=generation)

    @grpc_errors
    async def SetEngineSetting(
        self,
        request: sipb.SetEngineSettingRequest,
        context: grpc.aio.ServicerContext[sipb.SetEngineSettingRequest, sipb.EngineSettings],
    ) -> sipb.EngineSettings:
        level = _LEVELS.get(request.level)
        if level is None:
            raise InvalidArgumentError("level must be PROCESS, SESSION, PROJECT, GROUP or TENANT")
        return _out(
            await self.engine_settings.set(_scope(request.scope), level, request.key, request.value)
        )
