"""The system under test: the scripted model server as its own process, and the whole system
started by vance.supervisor.Supervisor the way the tests start it, on loopback only."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import httpx

from bench.errors import BenchError
from bench.wsclient import Client, status_of_name
from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.config import Config, load_config
from vance.internal.v1 import process_internal_pb2_grpc, worker_pb2_grpc
from vance.supervisor import Supervisor, die_with_parent
from vance.testing.ports import free_port_block
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc

SLOTS = 8
T = TypeVar("T")
_PR_SET_PDEATHSIG = 1


async def poll(
    fn: Callable[[], Awaitable[T | None]],
    *,
    timeout_s: float,
    what: str,
    interval_s: float = 0.05,
) -> T:
    """Polls fn until it returns something other than None, up to a deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = await fn()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise BenchError(f"timed out after {timeout_s:.0f}s waiting for {what}")
        await asyncio.sleep(interval_s)


@dataclass
class ScriptedModel:
    """`python -m vance.testing.scripted_llm` in its own process: its CPU is not ours."""

    port: int
    log: Path
    env: dict[str, str] = field(default_factory=dict)  # its pace: MODEL_TTFT_MS, ...
    proc: asyncio.subprocess.Process | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, timeout_s: float = 30.0) -> None:
        with self.log.open("ab") as err:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "vance.testing.scripted_llm",
                "--port",
                str(self.port),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                preexec_fn=die_with_parent,
                env={**os.environ, **self.env},
            )
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), timeout_s)
        except TimeoutError:
            raise BenchError(
                f"the scripted model did not start in {timeout_s:.0f}s; see {self.log}"
            ) from None
        if line.decode().strip() != f"listening {self.port}":
            raise BenchError(
                f"the scripted model said {line!r} instead of 'listening "
                f"{self.port}'; see {self.log}"
            )

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    async def stop(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.terminate()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


@dataclass
class BenchSystem:
    tmp: Path
    workers: int
    # The real-pace round measures the system as `make run` ships it: no slot or lease override.
    shipped_defaults: bool = False
    model_env: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)  # on top of the bench's settings
    config: Config | None = None
    sup: Supervisor | None = None
    model: ScriptedModel | None = None
    token: str = ""
    _channel: grpc.aio.Channel | None = None
    _next_worker: int = 1

    async def start(self) -> None:
        # base+8.. for the second replicas of the gRPC services (round (k)).
        base = free_port_block(12)
        self.model = ScriptedModel(base + 6, self.tmp / "scripted_llm.log", self.model_env)
        await self.model.start()
        self.env = {
            "VANCE_DATA_DIR": str(self.tmp / "data"),
            "VANCE_STORE_PORT": str(base + 4),
            "VANCE_GRPC_PORT_BASE": str(base),
            "VANCE_GRPC_HOST": "127.0.0.1",
            "VANCE_GATEWAY_HOST": "127.0.0.1",
            "VANCE_GATEWAY_PORT": str(base + 5),
            "VANCE_ENGINE_WORKERS": str(self.workers),
            "VANCE_WORKER_SLOTS": str(SLOTS),
            "VANCE_LEASE_MS": "6000",
            "VANCE_LLM_MODEL": "openai/scripted",
            "VANCE_LLM_API_BASE": self.model.base_url,
            "VANCE_LLM_API_KEY": "bench",
            "VANCE_LOG_LEVEL": "INFO",
            "VANCE_STORE_TRACE": str(self.store_trace_dir),
            # Lifecycle sweeps run only when the sweep benchmark asks (RunSweeps with its own
            # clock); a periodic round in the middle of another measurement would be noise.
            "VANCE_SWEEP_INTERVAL_MS": str(24 * 3600 * 1000),
            # ...and the stale-bind round is measured within a minute of the start.
            "VANCE_STALE_BIND_INITIAL_DELAY_MS": "0",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "VANCE_REPLICA_PORT_STRIDE": "8",
            **self.extra_env,
        }
        if self.shipped_defaults:
            del self.env["VANCE_WORKER_SLOTS"], self.env["VANCE_LEASE_MS"]
        self.config = load_config(env={**os.environ, **self.env})
        self.sup = Supervisor(self.config, self.env, log_to=self.logs, quiet=True)
        self._next_worker = self.workers + 1
        try:
            await self.sup.start_all()
        except (TimeoutError, OSError) as exc:
            raise BenchError(f"the system did not start: {exc}; logs in {self.logs}") from exc
        self._channel = authed_channel(
            self.config.address("process_service"),
            ServiceCredential.from_config(self.config, "bench"),
        )
        await self.wait_workers(self.workers)
        self.token = await self.login()

    @property
    def logs(self) -> Path:
        return self.tmp / "logs"

    @property
    def cfg(self) -> Config:
        if self.config is None:
            raise BenchError("the system is not started")
        return self.config

    @property
    def supervisor(self) -> Supervisor:
        if self.sup is None:
            raise BenchError("the system is not started")
        return self.sup

    @property
    def processes(self) -> process_pb2_grpc.ProcessServiceAsyncStub:
        if self._channel is None:
            raise BenchError("the system is not started")
        return process_pb2_grpc.ProcessServiceStub(self._channel)

    @property
    def processes_internal(self) -> process_internal_pb2_grpc.ProcessInternalServiceAsyncStub:
        if self._channel is None:
            raise BenchError("the system is not started")
        return process_internal_pb2_grpc.ProcessInternalServiceStub(self._channel)

    @property
    def worker_service(self) -> worker_pb2_grpc.WorkerServiceAsyncStub:
        if self._channel is None:
            raise BenchError("the system is not started")
        return worker_pb2_grpc.WorkerServiceStub(self._channel)

    @property
    def gateway(self) -> str:
        return f"{self.cfg.gateway.host}:{self.cfg.gateway.port}"

    def check_alive(self) -> None:
        """Fails with the name and exit code of any child that died."""
        for name, child in self.supervisor.children.items():
            if child.proc is not None and child.proc.returncode is not None:
                raise BenchError(
                    f"{name} exited with code {child.proc.returncode}; "
                    f"see {self.logs / (name + '.log')}"
                )
        if self.model is not None and self.model.proc is not None:
            if self.model.proc.returncode is not None:
                raise BenchError(f"the scripted model exited with {self.model.proc.returncode}")

    @property
    def store_trace_dir(self) -> Path:
        return self.tmp / "store-trace"

    def pids(self) -> dict[str, int]:
        """The supervisor's children by name (store, services, workers)."""
        return {
            name: child.proc.pid
            for name, child in self.supervisor.children.items()
            if child.proc is not None and child.proc.returncode is None
        }

    async def list_workers(self) -> list[Any]:
        resp = await self.processes.ListWorkers(ppb.ListWorkersRequest(), timeout=5)
        return list(resp.workers)

    async def wait_workers(self, count: int, timeout_s: float = 90.0) -> None:
        async def ready() -> bool | None:
            self.check_alive()
            try:
                live = [w for w in await self.list_workers() if not w.draining]
            except grpc.aio.AioRpcError:
                return None
            return True if len(live) == count else None

        await poll(
            ready,
            timeout_s=timeout_s,
            interval_s=0.1,
            what=f"{count} engine workers in ListWorkers",
        )

    async def add_workers(self, total: int) -> None:
        while self._next_worker <= total:
            await self.supervisor.start_worker(self._next_worker)
            self._next_worker += 1
        await self.wait_workers(total)

    async def wait_quiet(self, timeout_s: float = 60.0) -> None:
        """Until no worker runs a turn."""

        async def quiet() -> bool | None:
            self.check_alive()
            workers = await self.list_workers()
            return True if all(not w.running_turns for w in workers) else None

        await poll(quiet, timeout_s=timeout_s, interval_s=0.1, what="all turns to finish")

    async def login(self) -> str:
        url = f"http://{self.gateway}/brain/default/access/dev"
        async with httpx.AsyncClient(timeout=10) as http:
            try:
                r = await http.post(url, json={"password": "dev"})
            except httpx.HTTPError as exc:
                raise BenchError(f"login at {url} failed: {exc!r}") from exc
        if r.status_code != 200:
            raise BenchError(f"login at {url} failed: {r.status_code} {r.text}")
        return str(r.json()["token"])

    async def client(self, name: str, timeout_s: float = 15.0) -> Client:
        return await Client.connect(
            f"ws://{self.gateway}/brain/default/ws", self.token, name, timeout_s
        )

    async def chat_session(self, client: Client, timeout_s: float = 30.0) -> str:
        """Creates a session on the socket; returns the chat process id once its start turn
        (the welcome message) ended and it is IDLE."""
        idle = client.expect(status_of_name("chat", "IDLE"), "chat IDLE after session-create")
        try:
            created = await client.request("session-create", {"projectId": "demo"}, timeout_s)
        except BaseException:
            client.forget(idle)
            raise
        frame, _ = await client.wait(idle, timeout_s)
        pid = str(created.get("chatProcessId") or "")
        if frame["data"].get("processId") != pid:
            raise BenchError(f"{client.name}: IDLE of another process {frame} (chat is {pid})")
        return pid

    async def stop(self) -> None:
        if self._channel is not None:
            with contextlib.suppress(Exception):
                await self._channel.close()
            self._channel = None
        if self.sup is not None:
            await self.sup.stop_all()
        if self.model is not None:
            await self.model.stop()


def make_tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="vance-bench-"))
