"""Round (j): the cost of a hub turn with one tool call.

Each client opens a hub session (Eddie) and asks, one turn after the other; the scripted model
answers each ask in two calls, as a real one would: first a `scratchpad_read` (the user's own
work, served by process_service), then Eddie's `answer`. Reported: hub turns/s, the turn's
latency, server CPU per hub turn and the store commands per hub turn, so the cost of Eddie's
turn beside Arthur's plain one (round (b)) is on record; among them, the store work of the
user's hubs knowing what each other did (docs/architecture.md "Hubs that know what each other
did"): the turn's activity entry and the peers' activity read with its hub context."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import httpx

from bench.errors import BenchError
from bench.scenarios import (
    _until_idle,
    cpu_delta,
    cpu_snapshot,
    run_all,
    server_cpu,
    store_calls_per_turn,
    store_delta,
    store_snapshot,
)
from bench.system import BenchSystem
from bench.wsclient import Client, Frame, Pred, reply_data

ASK = "hubbench"
# Store commands ("<command> <collection>", vance/store_trace.py) of the hubs' shared activity.
PEER_WORK = {
    "activity write": "insert eddie_activity",
    "peer read": "find eddie_activity",
    "hub registry": "update hub_peers",
}
ANSWER = "Your scratchpad is read."


@dataclass
class HubTurnResult:
    clients: int
    duration_s: float
    answers: int = 0
    latencies: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    store_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    turns_in_costs: int = 0  # answered in the window or while the system drained

    @property
    def turns_per_s(self) -> float:
        return self.answers / self.duration_s

    def server_cpu_ms_per_turn(self) -> float:
        return 1000 * server_cpu(self.cpu) / max(1, self.turns_in_costs)

    def store_calls_per_turn(self) -> dict[str, float]:
        return store_calls_per_turn(self.store_calls, self.turns_in_costs)

    def peer_work_per_turn(self) -> dict[str, float]:
        """The activity write, the peer read and the hub registry per hub turn."""
        turns = max(1, self.turns_in_costs)
        return {
            label: sum(c.get(key, 0) for c in self.store_calls.values()) / turns
            for label, key in PEER_WORK.items()
        }


async def _script(system: BenchSystem) -> None:
    """Two repeating rules: an ask gets the tool call, the tool's result gets the answer."""
    assert system.model is not None
    rules = [
        {
            "match_last": ASK,
            "tool_calls": [{"name": "scratchpad_read", "arguments": {}}],
            "repeat": True,
        },
        {
            "match": ASK,
            "match_last": "tool_call_id",
            "tool_calls": [{"name": "answer", "arguments": {"message": ANSWER}}],
            "repeat": True,
        },
    ]
    async with httpx.AsyncClient(timeout=10) as http:
        r = await http.post(f"http://127.0.0.1:{system.model.port}/_script", json={"rules": rules})
    r.raise_for_status()


async def _reset(system: BenchSystem) -> None:
    assert system.model is not None
    async with httpx.AsyncClient(timeout=10) as http:
        await http.post(f"http://127.0.0.1:{system.model.port}/_reset")


def _eddie_answered(pid: str) -> Pred:
    def pred(f: Frame) -> bool:
        if f.get("type") != "chat-message-appended":
            return False
        d = f.get("data") or {}
        return bool(d.get("thinkProcessId") == pid and d.get("content") == ANSWER)

    return pred


async def hub_turns(
    system: BenchSystem, *, clients: int = 8, warmup_s: float = 3.0, duration_s: float = 15.0
) -> HubTurnResult:
    await _script(system)
    opened: list[tuple[Client, str]] = []
    try:
        for i in range(clients):
            client = await system.client(f"hub{i}")
            opened.append((client, ""))
            data = await client.request("session-create", {"hub": True}, 30)
            opened[-1] = (client, str(data.get("chatProcessId") or ""))
        result = HubTurnResult(clients, duration_s)
        start = time.perf_counter()
        window = (start + warmup_s, start + warmup_s + duration_s)
        cpus: list[dict[str, float]] = []
        stores: list[dict[str, dict[str, int]]] = []
        answered: list[tuple[float, float]] = []

        async def chat(client: Client, pid: str) -> None:
            n = 0
            while time.perf_counter() < window[1]:
                n += 1
                fid = client.new_id()
                reply = client.expect_reply(fid, "process-steer")
                answer = client.expect(_eddie_answered(pid), f"Eddie's answer {n}")
                t0 = time.perf_counter()
                await client.send(
                    fid, "process-steer", {"processName": "chat", "content": f"{ASK} {n}"}
                )
                frame, _ = await client.wait(reply, 30)
                reply_data(client.name, "process-steer", frame)
                _, at = await client.wait(answer, 60)
                answered.append((at, at - t0))

        async def sample() -> None:
            for edge in window:
                await asyncio.sleep(max(0.0, edge - time.perf_counter()))
                system.check_alive()
                cpus.append(cpu_snapshot(system))
                stores.append(store_snapshot(system))

        await run_all([*(chat(c, pid) for c, pid in opened), sample()])
        await system.wait_quiet()
        await _until_idle(system)
        result.cpu = cpu_delta(cpus[0], cpu_snapshot(system))
        result.store_calls = store_delta(stores[0], store_snapshot(system))
        for at, latency in answered:
            if window[0] <= at < window[1]:
                result.answers += 1
                result.latencies.append(latency)
        result.turns_in_costs = sum(1 for at, _ in answered if at >= window[0])
        if not result.answers:
            raise BenchError("hub turns: no answer in the window")
        return result
    finally:
        await asyncio.gather(*(c.close() for c, _ in opened), return_exceptions=True)
        await _reset(system)
