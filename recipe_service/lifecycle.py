"""Session lifecycle resolution: recipe steps, then settings, then the caller."""

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
from vance.domain import (
    LIFECYCLE_SETTINGS,
    OnDisconnect,
    OnIdle,
    OnSuspend,
    parse_lifecycle_setting,
)
from vance.errors import InvalidArgumentError

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS

# Step 5: what holds when even the `default` recipe names nothing (the built-in defaults, docs/operations.md).
BUILT_IN = Lifecycle(
    on_disconnect=OnDisconnect.KEEP_OPEN,
    on_idle=OnIdle.SUSPEND,
    on_suspend=OnSuspend.KEEP,
    idle_timeout_ms=30 * MINUTE_MS,
    suspend_keep_duration_ms=24 * HOUR_MS,
)
# A terminal user walks away without closing anything; an hour keeps a paused CLI alive.
FOOT_IDLE_TIMEOUT_MS = HOUR_MS


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
    """The lifecycle settings among `settings` as typed values; other keys are not ours."""
    out: dict[str, Any] = {}
    for key, raw in settings.items():
        name = LIFECYCLE_SETTINGS.get(key)
        if name is None or raw == "":
            continue
        try:
            out[name] = parse_lifecycle_setting(key, raw)
        except ValueError as exc:
            raise InvalidArgumentError(
                f"setting {key}={raw!r} {exc}", reason="invalid_setting"
            ) from None
    return out


def _session(spec: RecipeSpec | None, profile: str) -> SessionBlock | None:
    if spec is None:
        return None
    block = spec.profiles.get(profile)
    return block.session if block is not None else None


def _as_dict(lifecycle: Lifecycle) -> dict[str, Any]:
    return {name: getattr(lifecycle, name) for name in LIFECYCLE_FIELDS}
