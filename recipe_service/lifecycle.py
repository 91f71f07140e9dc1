"""Session lifecycle resolution (seed 002 §6): recipe steps, then settings, then the caller."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipe_service.models import (
    DEFAULT_PROFILE,
    LIFECYCLE_FIELDS,
    Lifecycle,
    LifecycleSource,
    Recipe,
    RecipeSpec,
    ResolvedLifecycle,
    SessionBlock,
)
from vance.domain import OnDisconnect, OnIdle, OnSuspend
from vance.errors import InvalidArgumentError

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS

# Step 5: what holds when even the `default` recipe names nothing (REFERENCE defaults).
BUILT_IN = Lifecycle(
    on_disconnect=OnDisconnect.KEEP_OPEN,
    on_idle=OnIdle.SUSPEND,
    on_suspend=OnSuspend.KEEP,
    idle_timeout_ms=30 * MINUTE_MS,
    suspend_keep_duration_ms=24 * HOUR_MS,
)
# A terminal user walks away without closing anything; an hour keeps a paused CLI alive.
FOOT_IDLE_TIMEOUT_MS = HOUR_MS

SETTINGS_PREFIX = "vance.session."
_SETTING_FIELDS = {
    "onDisconnect": "on_disconnect",
    "onIdle": "on_idle",
    "onSuspend": "on_suspend",
    "idleTimeoutMs": "idle_timeout_ms",
    "suspendKeepDurationMs": "suspend_keep_duration_ms",
}
_ENUMS: dict[str, Any] = {
    "on_disconnect": OnDisconnect,
    "on_idle": OnIdle,
    "on_suspend": OnSuspend,
}


def built_in_for(profile: str) -> Lifecycle:
    if profile == "foot":
        return Lifecycle(**{**_as_dict(BUILT_IN), "idle_timeout_ms": FOOT_IDLE_TIMEOUT_MS})
    return BUILT_IN


def resolve_lifecycle(
    *,
    bootstrap: Recipe,
    default_recipe: RecipeSpec | None,
    profile: str,
    settings: Mapping[str, str],
    caller: Lifecycle,
) -> ResolvedLifecycle:
    """Each property independently: the first recipe step that sets it (exact profile block of
    the bootstrap recipe, its `default` block, the `default` recipe's profile block, its
    `default` block), else the built-in default; then a settings override; then the caller.
    Order from weak to strong: recipe -> settings -> caller."""
    profile = profile or DEFAULT_PROFILE
    steps: list[tuple[LifecycleSource, SessionBlock | None]] = [
        (LifecycleSource.RECIPE_PROFILE, _session(bootstrap.spec, profile)),
        (LifecycleSource.RECIPE_DEFAULT, _session(bootstrap.spec, DEFAULT_PROFILE)),
        (LifecycleSource.DEFAULT_RECIPE_PROFILE, _session(default_recipe, profile)),
        (LifecycleSource.DEFAULT_RECIPE_DEFAULT, _session(default_recipe, DEFAULT_PROFILE)),
    ]
    overrides = settings_overrides(settings)
    caller_values = _as_dict(caller)
    built_in = _as_dict(built_in_for(profile))
    values: dict[str, Any] = {}
    sources: dict[str, LifecycleSource] = {}
    for name in LIFECYCLE_FIELDS:
        value, source = built_in[name], LifecycleSource.BUILT_IN
        for step, block in steps:
            found = getattr(block, name) if block is not None else None
            if found is not None:
                value, source = found, step
                break
        if overrides.get(name) is not None:
            value, source = overrides[name], LifecycleSource.SETTINGS
        if caller_values.get(name) is not None:
            value, source = caller_values[name], LifecycleSource.CALLER
        values[name], sources[name] = value, source
    return ResolvedLifecycle(
        lifecycle=Lifecycle(**values),
        sources=sources,
        recipe_name=bootstrap.name,
        recipe_source=bootstrap.source,
    )


def settings_overrides(settings: Mapping[str, str]) -> dict[str, Any]:
    """`vance.session.<property>` settings as typed values; other keys are not ours."""
    out: dict[str, Any] = {}
    for key, raw in settings.items():
        if not key.startswith(SETTINGS_PREFIX):
            continue
        name = _SETTING_FIELDS.get(key.removeprefix(SETTINGS_PREFIX))
        if name is None or raw == "":
            continue
        out[name] = _parse(key, name, raw)
    return out


def _parse(key: str, name: str, raw: str) -> Any:
    enum = _ENUMS.get(name)
    if enum is not None:
        try:
            return enum(raw.strip().upper())
        except ValueError:
            allowed = ", ".join(m.value for m in enum)
            raise InvalidArgumentError(
                f"setting {key}={raw!r} must be one of {allowed}", reason="invalid_setting"
            ) from None
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidArgumentError(
            f"setting {key}={raw!r} must be a non-negative number of milliseconds",
            reason="invalid_setting",
        )
    return value


def _session(spec: RecipeSpec | None, profile: str) -> SessionBlock | None:
    if spec is None:
        return None
    block = spec.profiles.get(profile)
    return block.session if block is not None else None


def _as_dict(lifecycle: Lifecycle) -> dict[str, Any]:
    return {name: getattr(lifecycle, name) for name in LIFECYCLE_FIELDS}
