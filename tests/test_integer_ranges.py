"""Every integer a client can send, found in the gateway's own declarations (the frame models
of gateway/dispatch.py and the REST OpenAPI document), so a field added later is covered
without editing this test: each declares its range, a value just outside it gets a 4xx with a
reason over the real socket or HTTP path, and the largest allowed value never gets a 5xx
(issue 27 item 10: a huge `lifecycle.idleTimeoutMs` used to answer `error 500 internal`)."""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel

from gateway.dispatch import ROUTES
from tests.harness import System, WsClient
from tests.sessions_support import chat_session, new_user
from vance.v1 import session_pb2 as spb


@dataclass(frozen=True)
class IntField:
    where: str  # frame type or "METHOD /path"
    path: tuple[str | int, ...]  # keys (and list indexes) inside the data or body
    minimum: int | None
    maximum: int | None


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return _resolve(defs[ref.rsplit("/", 1)[-1]], defs) if ref else schema


def integer_fields(
    where: str, schema: dict[str, Any], defs: dict[str, Any], path: tuple[str | int, ...] = ()
) -> list[IntField]:
    """Walks a JSON schema: properties, list items (index 0), unions (anyOf)."""
    schema = _resolve(schema, defs)
    out: list[IntField] = []
    if schema.get("type") == "integer":
        return [IntField(where, path, schema.get("minimum"), schema.get("maximum"))]
    for option in schema.get("anyOf", []) + schema.get("allOf", []):
        out += integer_fields(where, option, defs, path)
    for key, sub in (schema.get("properties") or {}).items():
        out += integer_fields(where, sub, defs, (*path, key))
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        out += integer_fields(where, schema["items"], defs, (*path, 0))
    return out


def frame_fields() -> list[IntField]:
    out = []
    for frame_type, route in ROUTES.items():
        model: type[BaseModel] = route.model
        schema = model.model_json_schema(by_alias=True)
        out += integer_fields(frame_type, schema, schema.get("$defs", {}))
    return out


def rest_fields(openapi: dict[str, Any]) -> list[IntField]:
    """Request bodies and query parameters; responses are the server's own numbers."""
    defs = openapi.get("components", {}).get("schemas", {})
    out = []
    for path, ops in openapi["paths"].items():
        for method, op in ops.items():
            where = f"{method.upper()} {path}"
            for param in op.get("parameters", []):
                if param.get("in") == "query":
                    out += integer_fields(where, param["schema"], defs, ("?", param["name"]))
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                out += integer_fields(where, body["schema"], defs)
    return out


def nest(path: tuple[str | int, ...], value: Any, base: dict[str, Any]) -> dict[str, Any]:
    """A copy of `base` with `value` at `path`; an index means a list (its first element)."""
    out: dict[str, Any] = copy.deepcopy(base)
    node: Any = out
    for key, nxt in itertools.pairwise(path):
        kind: type = list if isinstance(nxt, int) else dict
        if isinstance(node, list):
            if not node:
                node.append(kind())
            node = node[0]
        else:
            if not isinstance(node.get(key), kind):
                node[key] = kind()
            node = node[key]
    if isinstance(node, list):
        node[:1] = [value]
    else:
        node[path[-1]] = value
    return out


def frame_base(frame_type: str, sid: str) -> dict[str, Any]:
    """Just enough for the handler to run past its own checks."""
    bases: dict[str, dict[str, Any]] = {
        "session-create": {"projectId": "demo"},
        "session-resume": {"sessionId": sid},
        "session-monitor": {"sessionId": sid},
        "client-tool-register": {"tools": [{"name": "probe", "description": "d"}]},
    }
    return bases.get(frame_type, {})


def out_of_range(f: IntField) -> list[int]:
    assert f.maximum is not None and f.minimum is not None
    return [int(f.maximum) + 1, int(f.minimum) - 1]


async def test_every_integer_field_declares_its_range(system: System) -> None:
    async with httpx.AsyncClient() as http:
        openapi = (await http.get(f"http://{system.gateway}/openapi.json")).json()
    fields = frame_fields() + rest_fields(openapi)
    assert {f.where for f in fields} >= {"session-create", "process-messages", "session-resume"}
    assert any(f.path == ("lifecycle", "idleTimeoutMs") for f in fields)
    unbounded = [f for f in fields if f.maximum is None or f.minimum is None]
    assert not unbounded, unbounded


async def test_out_of_range_integers_are_refused_in_every_frame_field(system: System) -> None:
    _, token = await new_user(system)
    client, sid = await chat_session(system, token)
    fields = frame_fields()
    assert len(fields) >= 6, fields
    for f in fields:
        for value in out_of_range(f):
            got = await _send(client, f.where, nest(f.path, value, frame_base(f.where, sid)))
            assert got["type"] == "error", (f, value, got)
            assert got["data"]["errorCode"] == 400 and got["data"]["reason"], (f, value, got)
        # The largest allowed value is served, or refused for a reason of its own: never 5xx.
        biggest = nest(f.path, f.maximum, frame_base(f.where, sid))
        got = await _send(client, f.where, biggest)
        if got["type"] == "error":
            assert got["data"]["errorCode"] < 500, (f, got)
        if f.where in ("session-create", "session-resume", "session-monitor"):
            client = await _rebind(system, token, client, sid)
    await client.close()


async def test_out_of_range_integers_are_refused_in_every_rest_field(system: System) -> None:
    _, token = await new_user(system)
    client, sid = await chat_session(system, token)
    async with httpx.AsyncClient(
        base_url=f"http://{system.gateway}", headers={"Authorization": f"Bearer {token}"}
    ) as http:
        fields = rest_fields((await http.get("/openapi.json")).json())
        assert any(f.path == ("transitionAt",) for f in fields), fields
        # SUSPENDED, so `extend` adds the durations it gets to the session's transitionAt.
        await system.sessions.SuspendSession(
            spb.SuspendSessionRequest(tenant_id="default", session_id=sid)
        )
        for f in fields:
            method, template = f.where.split(" ", 1)
            url = template.replace("{tenant}", "default").replace("{session_id}", sid)
            url = url.replace("{", "x").replace("}", "")
            for value in [*out_of_range(f), f.maximum]:
                if f.path[0] == "?":
                    r = await http.request(method, url, params={str(f.path[1]): value})
                else:
                    r = await http.request(method, url, json=nest(f.path, value, {}))
                assert r.status_code < 500, (f, value, r.status_code, r.text[:300])
                if value != f.maximum:
                    assert r.status_code in (400, 422), (f, value, r.status_code, r.text[:300])
                    assert r.json()["detail"]["reason"], r.text[:300]
    await client.close()


async def _send(client: WsClient, frame_type: str, data: dict[str, Any]) -> dict[str, Any]:
    return await client.request(frame_type, data)


async def _rebind(system: System, token: str, client: WsClient, sid: str) -> WsClient:
    """After a frame that may have bound another session: back on the test's session."""
    await client.close()
    fresh = await system.connect(token)
    await fresh.ok("session-resume", {"sessionId": sid, "takeover": True})
    return fresh
