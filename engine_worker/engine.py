"""The ThinkEngine contract, turn outcomes, the registry and the version rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from engine_worker.json_types import JsonObject
from vance.domain import CloseReason, ProcessStatus, ThinkProcess

if TYPE_CHECKING:
    from engine_worker.context import ThinkEngineContext


@dataclass
class TurnOutcome:
    """What a lifecycle call decided. The runtime persists it when the turn commits."""

    status: ProcessStatus
    close_reason: CloseReason | None = None
    close_detail: str = ""
    # For the parent: the question when BLOCKED, the result when CLOSED.
    summary: str = ""
    payload: JsonObject = field(default_factory=dict)
    # A new rolling summary of chat history cut from the model's context (None: unchanged),
    # and the last chat message number it covers.
    chat_history_summary: str | None = None
    chat_history_summary_through: int = 0

    @classmethod
    def idle(cls) -> TurnOutcome:
        return cls(ProcessStatus.IDLE)

    @classmethod
    def blocked(cls, question: str) -> TurnOutcome:
        return cls(ProcessStatus.BLOCKED, summary=question)

    @classmethod
    def done(cls, summary: str, payload: JsonObject | None = None) -> TurnOutcome:
        return cls(ProcessStatus.CLOSED, CloseReason.DONE, summary=summary, payload=payload or {})


SUSPEND_HOOK, STOP_HOOK, PEER_HOOK = "SUSPEND", "STOP", "PEER"


class ThinkEngine(Protocol):
    """Stateless: all state lives in the process and reaches the engine through the context,
    built fresh for every call.

    `suspend` and `stop` are hooks, called after the process moved to SUSPENDED or CLOSED
    (stopped, or its session closed), in a short lane task of their own: they may record
    memory or settings; the status is not theirs to change, and they are not redone when they
    fail. They run only for an engine that names them in `hooks`, so an engine with nothing to
    do on those transitions costs no task. `peer` is a hook of a suspended hub that a peer
    event woke: it reads the pending peer events (`drain_pending`) without draining them.
    `default_settings` are the engine's values of
    typed settings keys, the lowest level of `ctx.settings_api()` (below the tenant)."""

    name: str
    title: str
    description: str
    version: str
    hooks: frozenset[str]

    def default_settings(self) -> dict[str, str]: ...

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome: ...

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome: ...

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome: ...

    async def suspend(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None: ...

    async def stop(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None: ...

    async def peer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None: ...

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str: ...


class EngineDefaults:
    """What an engine that needs no hooks and has no default settings inherits."""

    hooks: frozenset[str] = frozenset()

    def default_settings(self) -> dict[str, str]:
        return {}

    async def suspend(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None:
        return None

    async def stop(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None:
        return None

    async def peer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None:
        return None


class DuplicateEngineError(RuntimeError):
    pass


class EngineRegistry:
    """Engines by name. Two engines with one name fail at start-up."""

    def __init__(self, engines: list[ThinkEngine] | None = None) -> None:
        self._engines: dict[str, ThinkEngine] = {}
        for engine in engines or []:
            self.register(engine)

    def register(self, engine: ThinkEngine) -> None:
        if engine.name in self._engines:
            raise DuplicateEngineError(f"two engines are named {engine.name!r}")
        self._engines[engine.name] = engine

    def get(self, name: str) -> ThinkEngine | None:
        return self._engines.get(name)

    def names(self) -> list[str]:
        return sorted(self._engines)

    def versions(self) -> dict[str, str]:
        return {name: e.version for name, e in sorted(self._engines.items())}

    def hooks(self) -> dict[str, list[str]]:
        return {name: sorted(e.hooks) for name, e in sorted(self._engines.items()) if e.hooks}


def compatible(persisted: str, current: str) -> bool:
    """SemVer: a persisted process runs on an engine with the same major version."""
    if not persisted:
        return True
    return _major(persisted) == _major(current)


def _major(version: str) -> int:
    head = version.strip().lstrip("v").split(".", 1)[0]
    try:
        return int(head)
    except ValueError as exc:
        raise ValueError(f"not a SemVer version: {version!r}") from exc
