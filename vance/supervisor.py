"""Runs the whole system as separate processes: the store, the six services and the workers.
Readiness checks, prefixed logs, restarts of crashed children (backoff, crash-loop limit, a
status file for `vance status`), and a clean stop (no orphans, even if we are killed)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from vance.config import Config
from vance.embedded_store import ferretdb_command, ferretdb_env
from vance.grpc_env import GRPC_ENV
from vance.observability.setup import metrics_port_for
from vance.supervisor_status import (
    ChildState,
    ChildStatus,
    ExitInfo,
    SupervisorStatus,
    status_path,
    write_status,
)

logger = logging.getLogger(__name__)

GRPC_SERVICES = ("recipe_service", "tool_service", "process_service", "session_service")
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """This process gets SIGTERM when its parent dies, whatever killed it: the children of the
    supervisor, and the supervisor itself under `make run` (killing make stops everything)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


die_with_parent = _die_with_parent


@dataclass(frozen=True)
class RestartPolicy:
    """How `watch` restarts a child that exited: after `backoff_s`, doubled for every other exit
    of that child within the window (capped), and no more once `crash_limit` exits fall within
    `window_s` (a crash loop: restarting it again would only hide the cause)."""

    backoff_s: float = 0.1
    backoff_max_s: float = 10.0
    crash_limit: int = 5
    window_s: float = 60.0

    @classmethod
    def from_config(cls, config: Config) -> RestartPolicy:
        s = config.supervisor
        return cls(
            backoff_s=s.restart_backoff_ms / 1000,
            backoff_max_s=s.restart_backoff_max_ms / 1000,
            crash_limit=s.crash_loop_limit,
            window_s=s.crash_loop_window_s,
        )

    def delay(self, crashes_in_window: int) -> float:
        return min(self.backoff_max_s, self.backoff_s * 2.0 ** max(0, crashes_in_window - 1))


@dataclass
class Child:
    name: str
    argv: list[str]
    proc: asyncio.subprocess.Process | None = None
    pump: asyncio.Task[None] | None = None
    restarts: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)
    # Ready when this holds (None: as soon as it runs); checked after every (re)start.
    probe: Callable[[], Awaitable[bool]] | None = None
    state: ChildState = "starting"
    started_at: float | None = None
    last_exit: ExitInfo | None = None
    crashes: deque[float] = field(default_factory=deque)  # monotonic times, within the window

    def status(self) -> ChildStatus:
        return ChildStatus(
            name=self.name,
            state=self.state,
            pid=self.proc.pid if self.proc is not None else None,
            restarts=self.restarts,
            started_at=self.started_at,
            last_exit=self.last_exit,
            crashes_in_window=len(self.crashes),
        )


@dataclass
class Supervisor:
    config: Config
    env: dict[str, str]
    log_to: Path | None = None  # a directory: one log file per child instead of stdout
    quiet: bool = False
    children: dict[str, Child] = field(default_factory=dict)
    policy: RestartPolicy | None = None  # None: from config.supervisor
    poll_s: float = 0.1  # how often watch() looks for exited children
    running: bool = True
    # Children stopped on purpose, kept for the status file only (not in `children`).
    stopped: dict[str, Child] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.policy is None:
            self.policy = RestartPolicy.from_config(self.config)

    @property
    def status_file(self) -> Path:
        return status_path(self.config.data_dir)

    def write_status(self) -> None:
        """`vance status` reads this (vance/supervisor_status.py)."""
        assert self.policy is not None
        status = SupervisorStatus(
            pid=os.getpid(),
            running=self.running,
            updated_at=time.time(),
            crash_loop_limit=self.policy.crash_limit,
            crash_loop_window_s=self.policy.window_s,
            children=[c.status() for c in [*self.children.values(), *self.stopped.values()]],
        )
        try:
            write_status(self.status_file, status)
        except OSError:
            logger.warning("cannot write %s", self.status_file, exc_info=True)

    async def start_store(self) -> None:
        if not self.config.embedded_store:
            return
        data = Path(self.config.data_dir).resolve()
        child = Child(
            "store",
            ferretdb_command(data, self.config.store.port),
            extra_env=ferretdb_env(),
            probe=partial(_tcp_listens, self.config.store.port),
        )
        await self.start(child)

    async def start_services(self) -> None:
        for name in GRPC_SERVICES:
            addresses = self.config.replica_addresses(name)
            for i, address in enumerate(addresses):
                # Replica i listens on its own port (Config.listen_port).
                env = {"VANCE_REPLICA_INDEX": str(i)} if len(addresses) > 1 else {}
                child = Child(
                    replica_name(name, i),
                    [sys.executable, "-m", name],
                    extra_env=env,
                    probe=partial(_grpc_serving, address),
                )
                await self.start(child)
        gw = self.config.gateway
        for i in range(self.config.replica_count("gateway")):
            # Gateway replicas on consecutive ports; a load balancer in front spreads clients.
            child = Child(
                replica_name("gateway", i),
                [sys.executable, "-m", "gateway"],
                extra_env={"VANCE_GATEWAY_PORT": str(gw.port + i)} if i else {},
                probe=partial(_http_healthy, gw.host, gw.port + i),
            )
            await self.start(child)

    async def start(self, child: Child) -> None:
        """Starts a child and waits until its probe holds (if it has one)."""
        await self._spawn(child)
        if child.probe is not None:
            await self._until_ready(child, child.probe)
        self._mark_running(child)

    def _mark_running(self, child: Child) -> None:
        child.state = "running"
        self.write_status()

    async def _until_ready(
        self,
        child: Child,
        probe: Callable[[], Awaitable[bool]],
        timeout_s: float = 60,
        stop: asyncio.Event | None = None,
    ) -> None:
        """Polls `probe` until it holds. A child that exits meanwhile fails the start at once,
        quoting the end of its log (a port taken, a bad setting), rather than after the timeout."""
        deadline = time.monotonic() + timeout_s
        while not await probe():
            assert child.proc is not None
            if child.proc.returncode is not None:
                raise RuntimeError(
                    f"{child.name} exited with {child.proc.returncode} while starting"
                    f"{self._log_tail(child)}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{child.name} was not ready after {timeout_s:.0f}s{self._log_tail(child)}"
                )
            if stop is not None and stop.is_set():
                return
            await asyncio.sleep(0.1)

    def _log_tail(self, child: Child, lines: int = 30) -> str:
        if self.log_to is None:
            return ""  # its output went to our stdout, already shown
        path = self.log_to / f"{child.name}.log"
        try:
            tail = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"; the end of {path}:\n" + "\n".join(tail)

    async def start_worker(self, index: int, *, worker_id: str = "") -> Child:
        env = {"VANCE_WORKER_ID": worker_id or f"worker-{index}-{os.getpid()}"}
        child = Child(f"worker-{index}", [sys.executable, "-m", "engine_worker"], extra_env=env)
        await self.start(child)
        return child

    async def start_all(self) -> None:
        await self.start_store()
        await self.start_services()
        for i in range(self.config.worker.count):
            await self.start_worker(i + 1)

    async def _spawn(self, child: Child) -> Child:
        env = {**GRPC_ENV, **os.environ, **self.env, **child.extra_env}
        # One /metrics port per child (vance/observability/setup.py); a service's further
        # replicas have none (their ports would collide with the next service's).
        env["VANCE_METRICS_PORT"] = str(
            0
            if replica_base(child.name) != child.name
            else metrics_port_for(self.config.observability.metrics_port, child.name)
        )
        if self.log_to is not None:
            self.log_to.mkdir(parents=True, exist_ok=True)
            out = open(self.log_to / f"{child.name}.log", "ab")
            child.proc = await asyncio.create_subprocess_exec(
                *child.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                env=env,
                preexec_fn=_die_with_parent,
                start_new_session=True,
            )
            out.close()
        else:
            child.proc = await asyncio.create_subprocess_exec(
                *child.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                preexec_fn=_die_with_parent,
                # Own process group: a terminal's Ctrl-C reaches only the supervisor, which
                # then stops the children in order (workers drain before the services go).
                start_new_session=True,
            )
            # Tracked: awaited by stop_child and _recover once the child has exited.
            child.pump = asyncio.create_task(self._prefix(child))
        child.state = "starting"
        child.started_at = time.time()
        self.stopped.pop(child.name, None)
        self.children[child.name] = child
        self.write_status()
        return child

    async def _prefix(self, child: Child) -> None:
        assert child.proc is not None and child.proc.stdout is not None
        width = 16
        async for line in child.proc.stdout:
            if not self.quiet:
                sys.stdout.write(f"{child.name:<{width}}| {line.decode(errors='replace')}")
                sys.stdout.flush()

    async def restart_service(self, name: str) -> None:
        """Kills a service (a gRPC one or the gateway) as a crash would (SIGKILL) and starts it
        again, waiting until it serves: for tests of recovery on a system whose `watch` does not
        run, and for an operator's `vance`-run system."""
        child = self.children[name]
        if child.proc is not None and child.proc.returncode is None:
            child.proc.kill()
            await child.proc.wait()
        if child.pump is not None:
            await asyncio.gather(child.pump, return_exceptions=True)
        child.restarts += 1
        await self._spawn(child)
        assert child.probe is not None  # the gateway answers HTTP, the services gRPC health
        await self._until_ready(child, child.probe)
        self._mark_running(child)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        child = self.children[name]
        if child.proc is not None and child.proc.returncode is None:
            child.proc.send_signal(sig)

    async def stop_child(self, name: str, timeout_s: float | None = None) -> None:
        if timeout_s is None:
            # A worker may take its whole drain bound to finish in-flight turns.
            timeout_s = 15.0 + (
                self.config.worker.drain_timeout_s if name.startswith("worker-") else 0.0
            )
        child = self.children.pop(name, None)
        if child is None or child.proc is None:
            return
        if child.proc.returncode is None:
            child.proc.terminate()
            try:
                await asyncio.wait_for(child.proc.wait(), timeout_s)
            except TimeoutError:
                logger.warning("%s did not stop in %.0fs; killing it", name, timeout_s)
                with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
                    child.proc.kill()
                await child.proc.wait()
        if child.pump is not None:
            await asyncio.gather(child.pump, return_exceptions=True)
        child.state = "stopped"
        self.stopped[name] = child
        self.write_status()

    async def stop_all(self) -> None:
        """Workers first (they drain, in parallel), then the front, the services, the store."""
        workers = [n for n in self.children if n.startswith("worker-")]
        await asyncio.gather(*[self.stop_child(n) for n in workers])
        for base in ["gateway", *reversed(GRPC_SERVICES), "store"]:
            for name in [n for n in list(self.children) if replica_base(n) == base]:
                await self.stop_child(name)
        for name in list(self.children):
            await self.stop_child(name)
        self.running = False
        self.write_status()

    async def watch(self, stop: asyncio.Event) -> int:
        """Until a stop request: restarts every child that exits, each on its own (a service
        waited for until it serves again), by the restart policy. A child in a crash loop is
        left down and reported (log, status file); the rest go on. Returns 0 once stopped."""
        recovering: dict[str, asyncio.Task[None]] = {}
        async with asyncio.TaskGroup() as tg:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.poll_s)
                if stop.is_set():
                    break
                for name, child in list(self.children.items()):
                    task = recovering.get(name)
                    if task is not None and not task.done():
                        continue
                    if child.proc is None or child.proc.returncode is None:
                        continue
                    if child.state == "crash-loop":
                        continue
                    recovering[name] = tg.create_task(self._recover(child, stop))
            # A stop request ends the recoveries at their next check (never mid-spawn, so a
            # child they start is in `children` for stop_all to stop); the group awaits them.
        return 0

    async def _recover(self, child: Child, stop: asyncio.Event) -> None:
        """One exit of `child`: record it, then restart it after its backoff, or give up."""
        assert child.proc is not None and child.proc.returncode is not None
        assert self.policy is not None
        child.last_exit = ExitInfo.from_returncode(child.proc.returncode)
        if child.pump is not None:
            await asyncio.gather(child.pump, return_exceptions=True)
        now = time.monotonic()
        child.crashes.append(now)
        while child.crashes and child.crashes[0] < now - self.policy.window_s:
            child.crashes.popleft()
        if len(child.crashes) >= self.policy.crash_limit:
            child.state = "crash-loop"
            self.write_status()
            logger.error(
                "!!! %s exited %d times within %.0fs (last: %s): NOT restarting it again; "
                "fix the cause (its log), then restart `vance run` !!!",
                child.name,
                len(child.crashes),
                self.policy.window_s,
                child.last_exit.describe(),
            )
            return
        delay = self.policy.delay(len(child.crashes))
        child.state = "restarting"
        self.write_status()
        logger.warning(
            "%s exited (%s); restarting it in %.2fs (exit %d of at most %d within %.0fs)",
            child.name,
            child.last_exit.describe(),
            delay,
            len(child.crashes),
            self.policy.crash_limit,
            self.policy.window_s,
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)
        if stop.is_set():
            return
        child.restarts += 1
        try:
            await self._spawn(child)
        except OSError:
            # Cannot even start (its binary gone, no file descriptors): no use trying again.
            logger.exception("!!! cannot restart %s: NOT trying again !!!", child.name)
            child.state = "crash-loop"
            self.write_status()
            return
        if child.probe is not None:
            try:
                await self._until_ready(child, child.probe, stop=stop)
            except RuntimeError:
                return  # exited while starting: watch() sees it and counts another exit
            except TimeoutError:
                logger.error("%s was not ready in time after its restart; killing it", child.name)
                with contextlib.suppress(ProcessLookupError):
                    child.proc.kill()
                return
            if stop.is_set():
                return
        logger.warning(
            "%s is back, %.1fs after it exited (restart %d)",
            child.name,
            time.time() - child.last_exit.at,
            child.restarts,
        )
        self._mark_running(child)


def replica_name(service: str, index: int) -> str:
    """The child name of a service's replica: the service's own for the first, then `-2`..."""
    return service if index == 0 else f"{service}-{index + 1}"


def replica_base(child: str) -> str:
    base, _, number = child.rpartition("-")
    return base if base and number.isdigit() and not child.startswith("worker-") else child


async def _tcp_listens(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    return True


async def _grpc_serving(address: str) -> bool:
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            resp = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=1
            )
        except grpc.aio.AioRpcError:
            return False
        return bool(resp.status == health_pb2.HealthCheckResponse.SERVING)


async def _http_healthy(host: str, port: int) -> bool:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        return False
    try:
        writer.write(f"GET /healthz HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), 5)
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
    return b" 200 " in status
