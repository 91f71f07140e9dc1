"""Helpers for the process_create_delegate tests: projects with recipes, a caller process,
invoking the tool as an engine does, and the scripted selector."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.harness import System, WsClient
from tests.test_arthur_flow import wait_statuses
from vance.internal.v1 import recipe_internal_pb2_grpc, tool_pb2_grpc
from vance.internal.v1 import tool_pb2 as tpb
from vance.protoutil import dict_to_struct, from_value
from vance.testing.scripted_llm import Rule
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc
from vance.v1 import session_pb2 as spb

TENANT = "default"
SELECTOR = "recipe-selector"  # the purpose selector calls are sent with
# Pickable for delegation: `discuss` is listed too, but its engine (arthur) never reads a goal.
LISTED_BUNDLED = ["analyze", "default", "ford", "quick-lookup", "web-research"]


def recipes(system: System) -> recipe_pb2_grpc.RecipeServiceAsyncStub:
    return recipe_pb2_grpc.RecipeServiceStub(system.channel("recipe_service"))


def recipe_catalog(system: System) -> recipe_internal_pb2_grpc.RecipeInternalServiceAsyncStub:
    """The engine catalog and the selector's inventory (service-only, vance.internal.v1)."""
    return recipe_internal_pb2_grpc.RecipeInternalServiceStub(system.channel("recipe_service"))


def selector_says(m: str, reply: dict[str, Any] | str, **kw: Any) -> Rule:
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return Rule(purpose=SELECTOR, match=m, text=text, **kw)


def selector_calls(system: System, marker: str = "") -> list[dict[str, Any]]:
    seen = list(system.llm.script.side_requests.get(SELECTOR, []))
    return [r for r in seen if marker in json.dumps(r)]


def proposal(name: str, engine: str, marker: str) -> str:
    return (
        "Here is the recipe.\n```yaml\n"
        f"name: {name}\n"
        f"description: Writes short poems about a given theme ({marker}).\n"
        f"engine: {engine}\n"
        "title: Poem writer\n"
        "params:\n  model: default:fast\n  maxIterations: 2\n"
        "promptMode: APPEND\n"
        f"promptPrefix: |\n  Write the poem. POEM-{marker}\n"
        "```\n"
    )


async def project(system: System, m: str, stored: dict[str, str] | None = None) -> str:
    pid = f"dg-{m}"
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(tenant_id=TENANT, project_id=pid, title=pid)
    )
    for name, text in (stored or {}).items():
        await recipes(system).CreateRecipe(
            rpb.CreateRecipeRequest(tenant_id=TENANT, project_id=pid, name=name, yaml=text)
        )
    return pid


async def caller(system: System, pid: str, recipe: str = "") -> tuple[WsClient, str]:
    """A session in the project; its chat process is the caller of the tool."""
    client = await system.connect()
    data = {"projectId": pid, **({"recipe": recipe} if recipe else {})}
    created = await client.ok("session-create", data)
    await wait_statuses(client, {"chat": "IDLE"})
    return client, str(created["chatProcessId"])


async def delegate(system: System, process_id: str, **args: Any) -> dict[str, Any]:
    stub = tool_pb2_grpc.ToolServiceStub(system.channel("tool_service"))
    resp = await stub.InvokeTool(
        tpb.InvokeToolRequest(
            tool_name="process_create_delegate",
            arguments=dict_to_struct(args),
            process_id=process_id,
            idempotency_key=uuid.uuid4().hex,
        )
    )
    assert resp.status == pb.TOOL_CALL_STATUS_SUCCESS, resp.error
    result: dict[str, Any] = from_value(resp.result)
    return result


async def names(client: WsClient) -> dict[str, dict[str, Any]]:
    listed = await client.ok("process-list", {"includeTerminated": True})
    return {p["processName"]: p for p in listed["processes"]}
