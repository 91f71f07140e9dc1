"""Test harness: the real system as separate processes, a WebSocket client, polling helpers."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import websockets

from recipe_service.catalog import read_bundled_catalog
from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.config import Config, load_config
from vance.internal.v1 import process_internal_pb2_grpc, session_internal_pb2_grpc, worker_pb2_grpc
from vance.supervisor import Supervisor
from vance.testing.ports import free_port_block
from vance.testing.scripted_llm import Rule, ThreadedScriptedLlm
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc, session_pb2_grpc

DEFAULT_TIMEOUT = 20.0


async def eventually(
    fn: Callable[[], Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = 0.02,
    what: str = "condition",
) -> Any:
    """Polls until fn returns something truthy (or stops raising AssertionError)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = fn()
            if isinstance(value, Awaitable):
                value = await value
            if value:
                return value
        except AssertionError as exc:
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}") from last
        await asyncio.sleep(interval)


_ids = itertools.count(1)


@dataclass
class WsClient:
    ws: Any
    frames: list[dict[str, Any]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> WsClient:
        self.reader = asyncio.create_task(self._read())
        await self.wait_for(lambda f: f["type"] == "welcome")
        return self

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.frames.append(json.loads(raw))
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()

    async def send(self, type_: str, data: dict[str, Any]) -> str:
        fid = f"c{next(_ids)}"
        await self.ws.send(json.dumps({"id": fid, "type": type_, "data": data}))
        return fid

    async def request(
        self, type_: str, data: dict[str, Any] | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        fid = await self.send(type_, data or {})
        return await self.wait_for(
            lambda f: f.get("replyTo") == fid, timeout=timeout, what=f"reply to {type_}"
        )

    async def ok(self, type_: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = await self.request(type_, data)
        assert reply["type"] == type_, reply
        return dict(reply["data"])

    async def wait_for(
        self,
        pred: Callable[[dict[str, Any]], bool],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        what: str = "frame",
    ) -> dict[str, Any]:
        def find() -> dict[str, Any] | None:
            return next((f for f in self.frames if pred(f)), None)

        found: dict[str, Any] = await eventually(find, timeout=timeout, what=what)
        return found

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == type_]

    async def close(self) -> None:
        await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


@dataclass
class System:
    config: Config
    supervisor: Supervisor
    llm: ThreadedScriptedLlm
    channels: dict[str, grpc.aio.Channel] = field(default_factory=dict)

    @property
    def credential(self) -> ServiceCredential:
        """Tests call the services as a trusted service would (vance/auth.py)."""
        return ServiceCredential.from_config(self.config, "tests")

    @property
    def gateway(self) -> str:
        return f"{self.config.gateway.host}:{self.config.gateway.port}"

    def channel(self, service: str) -> grpc.aio.Channel:
        if service not in self.channels:
            self.channels[service] = authed_channel(self.config.address(service), self.credential)
        return self.channels[service]

    @property
    def processes(self) -> process_pb2_grpc.ProcessServiceAsyncStub:
        return process_pb2_grpc.ProcessServiceStub(self.channel("process_service"))

    @property
    def sessions(self) -> session_pb2_grpc.SessionServiceAsyncStub:
        return session_pb2_grpc.SessionServiceStub(self.channel("session_service"))

    @property
    def processes_internal(self) -> process_internal_pb2_grpc.ProcessInternalServiceAsyncStub:
        return process_internal_pb2_grpc.ProcessInternalServiceStub(self.channel("process_service"))

    @property
    def worker_service(self) -> worker_pb2_grpc.WorkerServiceAsyncStub:
        return worker_pb2_grpc.WorkerServiceStub(self.channel("process_service"))

    @property
    def sessions_internal(self) -> session_internal_pb2_grpc.SessionInternalServiceAsyncStub:
        return session_internal_pb2_grpc.SessionInternalServiceStub(self.channel("session_service"))

    def script(self, *rules: Rule) -> None:
        self.llm.script.add(*rules)

    def model_requests(self, marker: str) -> list[dict[str, Any]]:
        return [r for r in list(self.llm.script.requests) if marker in json.dumps(r)]

    async def login(self, user: str = "dev", password: str = "dev", tenant: str = "default") -> str:
        async with httpx.AsyncClient() as http:
            r = await http.post(
                f"http://{self.gateway}/brain/{tenant}/access/{user}", json={"password": password}
            )
            r.raise_for_status()
            return str(r.json()["token"])

    async def connect(self, token: str | None = None, tenant: str = "default") -> WsClient:
        token = token or await self.login()
        ws = await websockets.connect(
            f"ws://{self.gateway}/brain/{tenant}/ws",
            additional_headers={"Authorization": f"Bearer {token}"},
            max_size=None,
        )
        return await WsClient(ws).start()

    async def workers(self) -> list[ppb.WorkerInfo]:
        return list((await self.processes.ListWorkers(ppb.ListWorkersRequest())).workers)

    async def process(self, process_id: str) -> Any:
        return await self.processes.GetProcess(ppb.GetProcessRequest(process_id=process_id))

    async def close(self) -> None:
        for ch in self.channels.values():
            await ch.close()
        self.channels.clear()


WORKERS = 2


def system_env(tmp: Path, llm: ThreadedScriptedLlm) -> dict[str, str]:
    base = free_port_block(6)
    return {
        "VANCE_DATA_DIR": str(tmp / "data"),
        "VANCE_STORE_PORT": str(base + 4),
        "VANCE_GRPC_PORT_BASE": str(base),
        "VANCE_GATEWAY_PORT": str(base + 5),
        "VANCE_ENGINE_WORKERS": str(WORKERS),
        "VANCE_WORKER_SLOTS": "8",
        "VANCE_LEASE_MS": "6000",
        # Tests sweep at made-up times right after the start: no initial delay for stale binds.
        "VANCE_STALE_BIND_INITIAL_DELAY_MS": "0",
        "VANCE_LLM_MODEL": "openai/scripted",
        "VANCE_LLM_API_BASE": llm.base_url,
        "VANCE_LLM_API_KEY": "test-key",
        "VANCE_LOG_LEVEL": "INFO",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        # A copy of the bundled catalog, so a test can swap the file and reload it.
        "VANCE_ENGINE_CATALOG": str(catalog_path(tmp)),
    }


def catalog_path(tmp: Path) -> Path:
    return tmp / "catalog" / "engines.yaml"


async def has_workers(system: System, n: int = WORKERS) -> bool:
    try:
        return len(await system.workers()) >= n
    except grpc.aio.AioRpcError:
        return False  # process_service is (re)starting


@contextlib.asynccontextmanager
async def running_system(
    tmp: Path,
    llm: ThreadedScriptedLlm,
    *,
    logs: Path | None = None,
    extra_env: dict[str, str] | None = None,
    self_healing: bool = False,
) -> AsyncIterator[System]:
    """The whole system as real processes on ephemeral ports, until the block ends. With
    `self_healing`, the supervisor restarts crashed children as under `vance run` (tests that
    kill and restart children themselves leave it off)."""
    env = {**system_env(tmp, llm), **(extra_env or {})}
    catalog = catalog_path(tmp)
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_text(read_bundled_catalog())
    config = load_config(env={**os.environ, **env})
    sup = Supervisor(config, env, log_to=logs or tmp / "logs", quiet=True)
    system = System(config, sup, llm)
    stop = asyncio.Event()
    watch: asyncio.Task[int] | None = None
    try:
        await sup.start_all()
        if self_healing:
            watch = asyncio.create_task(sup.watch(stop))  # awaited below, before stop_all
        workers = int(env["VANCE_ENGINE_WORKERS"])
        await eventually(
            lambda: has_workers(system, workers), what="workers to connect", timeout=60
        )
        yield system
    finally:
        stop.set()
        if watch is not None:
            await watch
        await system.close()
        await sup.stop_all()
