"""Helpers for the memory and RAG tests: a fresh project (with a group), project-level engine
settings, Arthur's system prompts as the model read them, and REST calls as a user."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from tests.harness import System
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import common_pb2 as pb
from vance.v1 import session_pb2 as spb


async def new_project(system: System, *, tenant: str = "default", group: str = "") -> str:
    pid = f"kn-{uuid.uuid4().hex[:8]}"
    await system.sessions.CreateProject(
        spb.CreateProjectRequest(
            tenant_id=tenant, project_id=pid, title=pid, kind=pb.PROJECT_KIND_NORMAL, group=group
        )
    )
    return pid


async def set_project(
    system: System, project: str, values: dict[str, str], tenant: str = "default"
) -> None:
    for key, value in values.items():
        await system.sessions_internal.SetEngineSetting(
            sipb.SetEngineSettingRequest(
                scope=sipb.SettingScope(tenant_id=tenant, project_id=project),
                level=sipb.SETTING_LEVEL_PROJECT,
                key=key,
                value=value,
            )
        )


def system_prompts(system: System, marker: str) -> list[str]:
    return [
        str(b["messages"][0]["content"])
        for b in system.model_requests(marker)
        if b["messages"][0].get("role") == "system"
    ]


def block(prompt: str, tag: str) -> str:
    """The text inside <tag>...</tag> of a prompt, "" without one."""
    start, end = prompt.find(f"<{tag}>"), prompt.find(f"</{tag}>")
    return prompt[start + len(tag) + 2 : end] if start >= 0 and end > start else ""


def tool_messages(system: System, marker: str) -> list[Any]:
    """The tool results of the last model request holding `marker`, as the model read them."""
    requests = [r for r in system.model_requests(marker) if "tool_call_id" in json.dumps(r)]
    assert requests, f"no model request with tool results for {marker}"
    return [json.loads(m["content"]) for m in requests[-1]["messages"] if m.get("role") == "tool"]


async def rest(
    system: System,
    method: str,
    path: str,
    token: str,
    *,
    tenant: str = "default",
    body: dict[str, Any] | None = None,
) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.request(
            method,
            f"http://{system.gateway}/brain/{tenant}{path}",
            headers={"Authorization": f"Bearer {token}"},
            json=body,
        )
