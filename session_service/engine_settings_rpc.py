"""The engine settings RPCs of SessionService (session_service/engine_settings.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from session_service.engine_settings import (
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
from vance.v1 import session_pb2 as spb

_LEVELS: dict[int, str] = {
    spb.SETTING_LEVEL_PROCESS: PROCESS,
    spb.SETTING_LEVEL_SESSION: SESSION,
    spb.SETTING_LEVEL_PROJECT: PROJECT,
    spb.SETTING_LEVEL_TENANT: TENANT,
    spb.SETTING_LEVEL_GROUP: GROUP,
}
_BACK = {v: k for k, v in _LEVELS.items()}


def _scope(s: spb.SettingScope) -> Scope:
    return Scope(s.tenant_id, s.project_id, s.session_id, s.process_id)


def _out(values: dict[str, Resolved]) -> spb.EngineSettings:
    return spb.EngineSettings(
        values=[
            spb.EngineSettingValue(key=r.key, value=r.value, level=_BACK[r.level])  # type: ignore[arg-type]
            for r in values.values()
        ]
    )


class EngineSettingsRpcs:
    engine_settings: EngineSettings

    @grpc_errors
    async def ResolveEngineSettings(
        self,
        request: spb.ResolveEngineSettingsRequest,
        context: grpc.aio.ServicerContext[spb.ResolveEngineSettingsRequest, spb.EngineSettings],
    ) -> spb.EngineSettings:
        return _out(await self.engine_settings.resolve(_scope(request.scope), list(request.keys)))

    async def WatchSettings(
        self,
        request: spb.WatchSettingsRequest,
        context: grpc.aio.ServicerContext[spb.WatchSettingsRequest, spb.SettingsChange],
    ) -> AsyncIterator[spb.SettingsChange]:
        async for generation in self.engine_settings.docs.changes():
            yield spb.SettingsChange(generation=generation)

    @grpc_errors
    async def SetEngineSetting(
        self,
        request: spb.SetEngineSettingRequest,
        context: grpc.aio.ServicerContext[spb.SetEngineSettingRequest, spb.EngineSettings],
    ) -> spb.EngineSettings:
        level = _LEVELS.get(request.level)
        if level is None:
            raise InvalidArgumentError("level must be PROCESS, SESSION, PROJECT, GROUP or TENANT")
        return _out(
            await self.engine_settings.set(_scope(request.scope), level, request.key, request.value)
        )
