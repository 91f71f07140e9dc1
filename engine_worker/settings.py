"""The typed settings API of the engine context (`ctx.settings_api()`): a key's value looked up
through process -> session -> project -> group -> tenant
(session_service/settings/engine_settings.py),
then the engine's `default_settings()` (level ENGINE_DEFAULT), and `set` at a chosen level. The
whole chain is read on the first `get` of a turn; a `set` refreshes it, so the turn sees its own
write. What was read is kept for the next turns of the scope while the worker watches
session_service's settings writes (`SettingsCache`, engine_worker/watched.py), so a turn usually
asks nobody, and a value set anywhere reaches the next turn. When session_service cannot be
reached, the turn goes on
with every key unset (the callers' defaults): a conversation must not stop because the
settings are out of reach for a moment."""

from __future__ import annotations

import logging

import grpc

from engine_worker.watched import SETTINGS_TTL_S, WatchedCache
from vance.domain import ThinkProcess
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.internal.v1 import session_internal_pb2_grpc

PROCESS = sipb.SETTING_LEVEL_PROCESS
SESSION = sipb.SETTING_LEVEL_SESSION
PROJECT = sipb.SETTING_LEVEL_PROJECT
TENANT = sipb.SETTING_LEVEL_TENANT
GROUP = sipb.SETTING_LEVEL_GROUP
# Not a level one can write: the engine's own default, below every stored level.
ENGINE_DEFAULT = 0

logger = logging.getLogger(__name__)

Values = dict[str, tuple[str, int]]
ScopeKey = tuple[str, str, str, str]


class SettingsCache(WatchedCache[ScopeKey, Values]):
    def __init__(self) -> None:
        super().__init__(SETTINGS_TTL_S)


# Bounds the wait for an unreachable session_service (gRPC waits for a channel otherwise).
_RESOLVE_TIMEOUT_S = 2.0


class EngineSettingsApi:
    def __init__(
        self,
        process: ThinkProcess,
        stub: session_internal_pb2_grpc.SessionInternalServiceAsyncStub | None,
        defaults: dict[str, str] | None = None,
        *,
        cache: SettingsCache | None = None,
    ) -> None:
        self._stub = stub
        self._defaults = {k: (v, ENGINE_DEFAULT) for k, v in (defaults or {}).items()}
        self._cache = cache
        self._key: ScopeKey = (
            process.tenant_id,
            process.project_id,
            process.session_id,
            process.id,
        )
        self._scope = sipb.SettingScope(
            tenant_id=process.tenant_id,
            project_id=process.project_id,
            session_id=process.session_id,
            process_id=process.id,
        )
        self._values: Values | None = None

    async def _load(self) -> Values:
        if self._values is None and self._cache is not None:
            self._values = self._cache.get(self._key)
        if self._values is None:
            if self._stub is None:
                self._values = dict(self._defaults)
            else:
                since = self._cache.version if self._cache is not None else None
                try:
                    resp = await self._stub.ResolveEngineSettings(
                        sipb.ResolveEngineSettingsRequest(scope=self._scope),
                        timeout=_RESOLVE_TIMEOUT_S,
                    )
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (
                        grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                    ):
                        raise
                    logger.warning(
                        "settings of %s not reachable (%s): defaults this turn",
                        self._scope.process_id,
                        exc.code().name,
                    )
                    return dict(self._defaults)
                self._values = {
                    **self._defaults,
                    **{v.key: (v.value, int(v.level)) for v in resp.values},
                }
                if self._cache is not None:
                    self._cache.put(self._key, self._values, since)
        return self._values

    async def get(self, key: str) -> str | None:
        found = (await self._load()).get(key)
        return found[0] if found is not None else None

    async def level(self, key: str) -> int | None:
        """Where the value was found (PROCESS ... TENANT, ENGINE_DEFAULT), None when it is set
        nowhere."""
        found = (await self._load()).get(key)
        return found[1] if found is not None else None

    async def get_str(self, key: str, default: str = "") -> str:
        value = await self.get(key)
        return default if value is None else value

    async def get_int(self, key: str, default: int) -> int:
        value = await self.get(key)
        try:
            return default if value is None else int(value)
        except ValueError:
            return default

    async def get_bool(self, key: str, default: bool) -> bool:
        value = await self.get(key)
        return default if value is None else value.lower() == "true"

    async def set(self, key: str, value: str, level: int = PROCESS) -> None:
        """Writes `key` at `level` (an empty value removes it there); bad keys and values are
        refused by session_service with INVALID_ARGUMENT."""
        if self._stub is None:
            raise RuntimeError("this worker has no settings service")
        resp = await self._stub.SetEngineSetting(
            sipb.SetEngineSettingRequest(
                scope=self._scope,
                level=level,  # type: ignore[arg-type]
                key=key,
                value=value,
            )
        )
        self._values = {**self._defaults, **{v.key: (v.value, int(v.level)) for v in resp.values}}
        if self._cache is not None:
            self._cache.drop(self._key)
