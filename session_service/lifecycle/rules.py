"""Session lifecycle rules: the status roll-up over engines, when an
engine counts as busy, and transitionAt. Pure functions: the properties they read are
`LifecycleProps` (domain/models.py), the sweep sets are in lifecycle/sweep_sets.py."""

from __future__ import annotations

from collections.abc import Iterable

from session_service.domain.models import LifecycleProps, SessionStatus
from session_service.settings.session_settings import SETTING_FORCED_FLOOR
from vance.config import LifecycleConfig
from vance.domain import WAKING, OnSuspend, ProcessStatus, SuspendCause

# Engine statuses in which the user or the engine is engaged.
BUSY_ENGINE = frozenset({ProcessStatus.RUNNING, ProcessStatus.BLOCKED, ProcessStatus.PAUSED})


def engine_busy(status: str, pending_count: int) -> bool:
    """An engine counts against "session is idle" when it works, waits for the user or was
    paused by them, or is IDLE with messages that are about to start a turn. `status` is a
    ProcessStatus value as process_service reports it (vance/clients/process.py)."""
    return status in BUSY_ENGINE or (status in WAKING and pending_count > 0)


def rollup(engines: Iterable[tuple[str, int]]) -> SessionStatus:
    """RUNNING when some non-CLOSED engine is busy, else IDLE (also with no engines)."""
    busy = any(engine_busy(s, n) for s, n in engines if s != ProcessStatus.CLOSED)
    return SessionStatus.RUNNING if busy else SessionStatus.IDLE


def transition_at(
    cause: SuspendCause, props: LifecycleProps, suspended_at_ms: int, forced_floor_ms: int
) -> int:
    """The only place where the suspend cause and onSuspend interact. FORCED
    always waits the floor: work was cut off and an operator needs time to step in."""
    if cause is SuspendCause.FORCED:
        return suspended_at_ms + forced_floor_ms
    if props.on_suspend is OnSuspend.CLOSE:
        return suspended_at_ms
    return suspended_at_ms + props.suspend_keep_duration_ms


# ---- tenant and project settings ----


def forced_floor(config: LifecycleConfig, settings: dict[str, str]) -> int:
    return _int(settings.get(SETTING_FORCED_FLOOR), config.forced_floor_ms)


def _int(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw not in (None, "") else default
    except ValueError:
        return default
