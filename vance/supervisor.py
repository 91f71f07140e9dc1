"""Runs the whole system as separate processes: the store, the six services and the workers.
Readiness checks, prefixed logs, and a clean stop (no orphans, even if we are killed)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from vance.config import Config
from vance.embedded_store import ferretdb_command, ferretdb_env
from vance.observability.setup import metrics_port_for

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


@dataclass
class Child:
    name: str
    argv: list[str]
    proc: asyncio.subprocess.Process | None = None
    pump: asyncio.Task[None] | None = None
    restarts: int = 0


@dataclass
class Supervisor:
    config: Config
    env: dict[str, str]
    log_to: Path | None = None  # a directory: one log file per child instead of stdout
    quiet: bool = False
    children: dict[str, Child] = field(default_factory=dict)

    async def start_store(self) -> None:
        if not self.config.embedded_store:
            return
        data = Path(self.config.data_dir).resolve()
        child = await self._spawn(
            Child("store", ferretdb_command(data, self.config.store.port)), ferretdb_env()
        )
        await self._until_ready(child, partial(_tcp_listens, self.config.store.port))

    async def start_services(self) -> None:
        for name in GRPC_SERVICES:
            child = await self._spawn(Child(name, [sys.executable, "-m", name]))
            await self._until_ready(child, partial(_grpc_serving, self.config.address(name)))
        child = await self._spawn(Child("gateway", [sys.executable, "-m", "gateway"]))
        gw = self.config.gateway
        await self._until_ready(child, partial(_http_healthy, gw.host, gw.port))

    async def _until_ready(
        self, child: Child, probe: Callable[[], Awaitable[bool]], timeout_s: float = 60
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
        child = Child(f"worker-{index}", [sys.executable, "-m", "engine_worker"])
        await self._spawn(child, extra_env=env)
        return child

    async def start_all(self) -> None:
        await self.start_store()
        await self.start_services()
        for i in range(self.config.worker.count):
            await self.start_worker(i + 1)

    async def _spawn(self, child: Child, extra_env: dict[str, str] | None = None) -> Child:
        env = {**os.environ, **self.env, **(extra_env or {})}
        # One /metrics port per child (vance/observability/setup.py).
        env["VANCE_METRICS_PORT"] = str(
            metrics_port_for(self.config.observability.metrics_port, child.name)
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
            # Tracked: awaited by stop_child and restart_service once the child has exited.
            child.pump = asyncio.create_task(self._prefix(child))
        self.children[child.name] = child
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
        again, waiting until it serves: for tests of recovery, and for an operator's `vance`-run
        system."""
        child = self.children[name]
        if child.proc is not None and child.proc.returncode is None:
            child.proc.kill()
            await child.proc.wait()
        if child.pump is not None:
            await asyncio.gather(child.pump, return_exceptions=True)
        fresh = await self._spawn(Child(name, child.argv, restarts=child.restarts + 1))
        gw = self.config.gateway
        probe = (  # the gateway answers HTTP, the services gRPC health
            partial(_http_healthy, gw.host, gw.port)
            if name == "gateway"
            else partial(_grpc_serving, self.config.address(name))
        )
        await self._until_ready(fresh, probe)

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

    async def stop_all(self) -> None:
        """Workers first (they drain, in parallel), then the front, the services, the store."""
        workers = [n for n in self.children if n.startswith("worker-")]
        await asyncio.gather(*[self.stop_child(n) for n in workers])
        for name in ["gateway", *reversed(GRPC_SERVICES), "store"]:
            await self.stop_child(name)
        for name in list(self.children):
            await self.stop_child(name)

    async def watch(self, stop: asyncio.Event) -> int:
        """Waits for a stop request; restarts crashed workers; a crashed service stops all."""
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass
            for name, child in list(self.children.items()):
                if child.proc is None or child.proc.returncode is None:
                    continue
                if name.startswith("worker-"):
                    logger.warning("%s exited with %s; restarting it", name, child.proc.returncode)
                    index = int(name.split("-")[1])
                    del self.children[name]
                    await self.start_worker(index)
                else:
                    logger.error(
                        "%s exited with %s; stopping everything", name, child.proc.returncode
                    )
                    return 1
        return 0


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
