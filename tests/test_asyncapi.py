"""The WebSocket's AsyncAPI document (gateway/asyncapi.py): the checked-in docs/asyncapi.json is
what the gateway's models generate (so it cannot drift from them) and what `/asyncapi.json`
serves, and the frames of a whole live chat, both ways, validate against it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from jsonschema import Draft202012Validator

from gateway.asyncapi import CHECKED_IN, document, render
from tests.harness import System, WsClient
from vance.testing.scripted_llm import Rule


def _validator(doc: dict[str, Any], names: list[str]) -> Draft202012Validator:
    """Exactly one of these messages' payloads must match a frame; the document's components
    ride along so the payloads' `#/components/...` references resolve."""
    payloads = [doc["components"]["messages"][n]["payload"] for n in names]
    return Draft202012Validator({"oneOf": payloads, "components": doc["components"]})


def _names(doc: dict[str, Any], action: str) -> list[str]:
    """Messages the gateway receives (client frames) or sends (replies, pushed, errors)."""
    out: list[str] = []
    for op in doc["operations"].values():
        refs = op["messages"] if op["action"] == action else []
        if action == "send":
            refs = refs + op.get("reply", {}).get("messages", [])
        out += [r["$ref"].rsplit("/", 1)[1] for r in refs]
    return sorted(set(out))


def test_the_checked_in_document_is_what_the_models_generate() -> None:
    assert CHECKED_IN.read_text() == render(document()), (
        "docs/asyncapi.json is stale: run `python -m gateway.asyncapi --write`"
    )


def test_every_reference_in_the_document_resolves() -> None:
    doc = document()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target: Any = doc
                for part in ref.removeprefix("#/").split("/"):
                    assert isinstance(target, dict) and part in target, ref
                    target = target[part]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    assert doc["asyncapi"] == "3.0.0"


async def test_a_live_chat_validates_against_the_document(system: System) -> None:
    async with httpx.AsyncClient() as http:
        served = (await http.get(f"http://{system.gateway}/asyncapi.json")).json()
    assert served == json.loads(CHECKED_IN.read_text())

    m = uuid.uuid4().hex[:8]
    say = f"asyncapi {m}: list the processes"
    system.script(
        Rule(match_last=say, tool_calls=[{"name": "process_list", "arguments": {}}]),
        Rule(
            match=say,
            match_last="tool_call_id",
            text=f"Only the chat is running ({m}).",
        ),
    )
    client = await system.connect()
    sent: list[dict[str, Any]] = []

    async def ask(type_: str, data: dict[str, Any]) -> dict[str, Any]:
        reply = await client.request(type_, data)
        sent.append({"id": reply["replyTo"], "type": type_, "data": data})
        return reply

    try:
        await ask("ping", {"clientTimestamp": 17})
        created = await ask("session-create", {"projectId": "demo"})
        assert created["type"] == "session-create", created
        await ask("process-steer", {"processName": "chat", "content": say})
        await _assistant_says(client, f"Only the chat is running ({m}).")
        await ask("process-list", {"includeTerminated": True})
        await ask("process-messages", {"processName": "chat", "limit": 10})
        await ask("plan-get", {})
        await ask("process-stop", {})  # refused: target_required, an error frame
        await ask("client-tool-register", {"tools": []})
        await ask("session-unbind", {})
        await client.ws.send("not json")  # an error frame with replyTo null
        await client.wait_for(lambda f: f["type"] == "error" and f["replyTo"] is None)
    finally:
        await client.close()

    doc = document()
    inbound = _validator(doc, _names(doc, "receive"))
    outbound = _validator(doc, _names(doc, "send"))
    for frame in sent:
        errors = [e.message for e in inbound.iter_errors(frame)]
        assert not errors, (frame, errors[:3])
    for frame in client.frames:
        errors = [e.message for e in outbound.iter_errors(frame)]
        assert not errors, (frame, errors[:3])
    # The chat really went through the modelled frames, not only the catch-all.
    seen = {f["type"] for f in client.frames}
    assert {
        "welcome",
        "pong",
        "session-create",
        "process-steer",
        "chat-message-appended",
        "chat-message-stream-chunk",
        "process-progress",
        "tool-call-started",
        "tool-call-completed",
        "process-list",
        "process-messages",
        "plan-get",
        "client-tool-register",
        "session-unbind",
        "error",
    } <= seen, seen


async def _assistant_says(client: WsClient, text: str) -> None:
    await client.wait_for(
        lambda f: (
            f["type"] == "chat-message-appended"
            and f["data"]["role"] == "assistant"
            and text in f["data"]["content"]
        ),
        timeout=60,
        what=f"the assistant saying {text!r}",
    )
