"""Wiring of the session lifecycle: the objects behind the lifecycle RPCs, built once per
session_service replica, and its background tasks (the periodic sweep, the one-time sweep-set
backfill, the boot restart of FORCED-suspended sessions)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from session_service.lifecycle.abandoned import AbandonedEvaluator
from session_service.lifecycle.archive import Archive
from session_service.lifecycle.batch_transitions import Batches
from session_service.lifecycle.connection_binding import Binding
from session_service.lifecycle.hooks import Hooks
from session_service.lifecycle.sweep_sets import SweepSets
from session_service.lifecycle.sweepers import Sweepers
from session_service.lifecycle.transitions import Transitions
from session_service.settings.session_settings import Settings
from session_service.settings.settings_docs import SettingsDocs
from session_service.store.raw import Db
from session_service.store.session_store import SessionStore
from vance.background import Background
from vance.clients.process import Processes
from vance.clients.recipe import Recipes
from vance.clock import Clock
from vance.config import LifecycleConfig
from vance.ids import new_id

logger = logging.getLogger(__name__)


@dataclass
class LifecycleServices:
    """Everything the lifecycle RPCs need, built once per session_service replica."""

    transitions: Transitions
    archive: Archive
    binding: Binding
    sweepers: Sweepers
    config: LifecycleConfig
    settings: Settings


def build_lifecycle(
    db: Db,
    store: SessionStore,
    clock: Clock,
    processes: Processes,
    recipes: Recipes,
    config: LifecycleConfig,
    *,
    hooks: Hooks | None = None,
    replica_id: str = "",
    settings_docs: SettingsDocs | None = None,
) -> LifecycleServices:
    settings = Settings(db, settings_docs)
    evaluator = AbandonedEvaluator(processes, settings, config)
    transitions = Transitions(
        store, SweepSets(db), settings, processes, recipes, evaluator, clock, config
    )
    hooks = hooks or Hooks()
    archive = Archive(transitions, hooks)
    return LifecycleServices(
        settings=settings,
        transitions=transitions,
        archive=archive,
        binding=Binding(transitions, stale_after_ms=config.bind_stale_after_ms),
        sweepers=Sweepers(
            db,
            transitions,
            Batches(transitions, hooks),
            evaluator,
            config,
            replica_id=replica_id or new_id("replica"),
        ),
        config=config,
    )


def start_lifecycle_tasks(
    lifecycle: LifecycleServices, clock: Clock, background: Background
) -> None:
    """The periodic sweep, the one-time sweep-set backfill and, when configured, the boot
    restart of FORCED-suspended sessions, in the service's background group."""
    background.start("sweep-set-backfill", _backfill(lifecycle), forever=False)
    background.start("lifecycle-sweeps", lifecycle.sweepers.run_forever(clock))
    if lifecycle.config.auto_restart_forced.enabled:
        background.start("forced-restart", _boot_restart(lifecycle), forever=False)


async def _backfill(lifecycle: LifecycleServices) -> None:
    try:
        await lifecycle.sweepers.backfill_once()
    except Exception:
        logger.exception("indexing sessions stored before the sweep sets failed")


async def _boot_restart(lifecycle: LifecycleServices) -> None:
    restart = lifecycle.config.auto_restart_forced
    try:
        await lifecycle.sweepers.restart_forced(
            max_concurrent=restart.max_concurrent, delay_between_ms=restart.delay_between_ms
        )
    except Exception:
        logger.exception("auto-restart of FORCED-suspended sessions failed")


async def release_lifecycle(lifecycle: LifecycleServices) -> None:
    """After the background group has stopped: hand the sweep lease to another replica."""
    try:
        await lifecycle.sweepers.release_lease()
    except Exception:
        logger.warning("could not release the sweep lease", exc_info=True)
