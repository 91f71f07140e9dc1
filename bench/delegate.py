"""(g) The latency process_create_delegate (MATCH) adds over process_create, with the
zero-latency scripted model. `python -m bench.delegate` runs it alone on its own system.

Both tools are invoked the way an engine invokes them (ToolService.InvokeTool on behalf of a
session's chat process), interleaved, so background load hits both alike. The difference is
the selector: one SelectRecipe call (inventory from the store, one streamed model call through
litellm) before the same spawn path; SelectRecipe alone is timed too.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

import httpx
import uvloop

from bench.errors import BenchError
from bench.markdown import table
from bench.stats import percentile
from bench.system import BenchSystem, make_tmp
from vance.auth import ServiceCredential
from vance.authclient import authed_channel
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc, tool_pb2_grpc
from vance.internal.v1 import tool_pb2 as tpb
from vance.protoutil import dict_to_struct, from_value
from vance.v1 import common_pb2 as pb

ROUNDS = 40
RECIPE = "quick-lookup"
TASK = "What is the boiling point of water at sea level?"


async def _script(system: BenchSystem, rules: list[dict[str, Any]]) -> None:
    if system.model is None:
        raise BenchError("the scripted model is not started")
    async with httpx.AsyncClient(timeout=10) as http:
        r = await http.post(f"http://127.0.0.1:{system.model.port}/_script", json={"rules": rules})
        r.raise_for_status()


async def measure_delegate(system: BenchSystem, rounds: int = ROUNDS) -> dict[str, Any]:
    answer = {"decision": "MATCH", "recipe": RECIPE, "rationale": "one factual question"}
    await _script(
        system, [{"purpose": "recipe-selector", "repeat": True, "text": json.dumps(answer)}]
    )
    client = await system.client("delegate")
    caller = await system.chat_session(client)
    tenant, project = "default", "demo"
    credential = ServiceCredential.from_config(system.cfg, "bench")
    async with (
        authed_channel(system.cfg.address("tool_service"), credential) as tools_ch,
        authed_channel(system.cfg.address("recipe_service"), credential) as recipes_ch,
    ):
        tools = tool_pb2_grpc.ToolServiceStub(tools_ch)
        recipes = recipe_internal_pb2_grpc.RecipeInternalServiceStub(recipes_ch)

        async def invoke(tool: str, args: dict[str, Any]) -> float:
            t0 = time.perf_counter()
            resp = await tools.InvokeTool(
                tpb.InvokeToolRequest(
                    tool_name=tool,
                    arguments=dict_to_struct(args),
                    process_id=caller,
                    idempotency_key=uuid.uuid4().hex,
                ),
                timeout=60,
            )
            elapsed = (time.perf_counter() - t0) * 1000
            if resp.status != pb.TOOL_CALL_STATUS_SUCCESS:
                raise BenchError(f"{tool} failed: {resp.error}")
            if tool.endswith("delegate") and from_value(resp.result)["decision"] != "MATCH":
                raise BenchError(f"the delegate did not match: {from_value(resp.result)}")
            return elapsed

        async def select() -> float:
            t0 = time.perf_counter()
            await recipes.SelectRecipe(
                ripb.SelectRecipeRequest(tenant_id=tenant, project_id=project, task=TASK),
                timeout=60,
            )
            return (time.perf_counter() - t0) * 1000

        await invoke("process_create_delegate", {"name": "warm-up", "task": TASK})
        create, delegate, selects = [], [], []
        for i in range(rounds):
            create.append(
                await invoke("process_create", {"name": f"pc-{i}", "goal": TASK, "recipe": RECIPE})
            )
            delegate.append(
                await invoke(
                    "process_create_delegate",
                    {"name": f"dg-{i}", "task": TASK, "fallbackOnNone": False},
                )
            )
            selects.append(await select())
    await client.close()
    await system.wait_quiet()

    def stats(values: list[float]) -> dict[str, float]:
        return {
            "p50_ms": round(percentile(values, 50), 1),
            "p90_ms": round(percentile(values, 90), 1),
        }

    c, d = stats(create), stats(delegate)
    return {
        "rounds": rounds,
        "process_create": c,
        "process_create_delegate": d,
        "select_recipe": stats(selects),
        "added_p50_ms": round(d["p50_ms"] - c["p50_ms"], 1),
    }


def delegate_section(r: dict[str, Any]) -> list[str]:
    rows = [
        [name, str(r[key]["p50_ms"]), str(r[key]["p90_ms"])]
        for name, key in (
            ("process_create", "process_create"),
            ("process_create_delegate (MATCH)", "process_create_delegate"),
            ("RecipeService.SelectRecipe alone", "select_recipe"),
        )
    ]
    return [
        "## (g) process_create_delegate: added latency of a MATCH",
        "",
        f"{r['rounds']} rounds, interleaved, each tool through `ToolService.InvokeTool` on behalf "
        f"of a chat process; the selector's model call is the scripted zero-latency reply "
        f"(MATCH `{RECIPE}`). The delegate adds **{r['added_p50_ms']} ms** at the median.",
        "",
        *table(["call", "p50 ms", "p90 ms"], rows),
        "",
    ]


async def _alone() -> dict[str, Any]:
    system = BenchSystem(make_tmp(), workers=1)
    try:
        await system.start()
        return await measure_delegate(system)
    finally:
        await system.stop()


def main() -> None:
    try:
        result = uvloop.run(_alone())
    except BenchError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        sys.exit(1)
    print("\n".join(delegate_section(result)))


if __name__ == "__main__":
    main()
