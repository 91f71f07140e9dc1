"""The AsyncAPI 3 document of the client WebSocket, generated from the gateway's own tables: the
frame table (gateway/dispatch.py) with the declared model of each client frame's `data`
(gateway/inputs.py), and the models of every reply and pushed frame (gateway/outputs.py).

Served at `/asyncapi.json`; checked in as docs/asyncapi.json, which tests/test_asyncapi.py
compares with this output (regenerate: `python -m gateway.asyncapi --write`) and against which
it validates the live frames of a whole chat. Operations are from the gateway's side: it
`receive`s a client frame and replies, and it `send`s pushed frames."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from gateway import outputs
from gateway.dispatch import ROUTES
from gateway.inputs import AuthData, Envelope
from vance import PROTOCOL_VERSION, __version__

CHECKED_IN = Path(__file__).resolve().parent.parent / "docs" / "asyncapi.json"
_REF = "#/components/schemas/{model}"
_CHANNEL = "#/channels/socket"


Refs = dict[Any, dict[str, Any]]


def _schemas() -> tuple[Refs, dict[str, Any]]:
    models: list[type[BaseModel]] = [AuthData, outputs.ErrorData, outputs.SessionNoticeData]
    models += [r.model for r in ROUTES.values()]
    models += [m for ms in outputs.REPLIES.values() for m in ms]
    models += [m for m, _ in outputs.PUSHED.values()]
    unique = list(dict.fromkeys(models))
    mode: Literal["validation"] = "validation"
    refs, top = models_json_schema([(m, mode) for m in unique], ref_template=_REF)
    return dict(refs), dict(top.get("$defs", {}))


def _ref(refs: Refs, model: type[BaseModel]) -> dict[str, Any]:
    return dict(refs[(model, "validation")])


def _client_envelope(type_: str, data: dict[str, Any]) -> dict[str, Any]:
    """A client frame: the envelope model's fields with this frame's type and data model."""
    envelope = Envelope.model_json_schema(by_alias=True)
    props = dict(envelope["properties"])
    props["type"] = {"const": type_}
    props["data"] = data
    return {"type": "object", "properties": props, "required": ["type"]}


def _server_envelope(
    type_: dict[str, Any], data: dict[str, Any], *, reply: bool | None, seq: bool
) -> dict[str, Any]:
    """A server frame: `replyTo` is the request's id on a reply, null on a pushed frame (either
    on an error); `seq` only on the session's events."""
    reply_to: dict[str, Any] = (
        {"type": ["string", "null"]}
        if reply is None
        else ({"type": "string"} if reply else {"type": "null"})
    )
    props: dict[str, Any] = {
        "id": {"type": "string", "description": "f_<time><random>"},
        "replyTo": reply_to,
        "type": type_,
        "data": data,
    }
    required = ["id", "replyTo", "type", "data"]
    if seq:
        props["seq"] = {"type": "integer", "minimum": 1}
        props["forwardedBy"] = {"description": "the hub hop of a forwarded frame"}
        required.append("seq")
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def _one(refs: Refs, ms: tuple[type[BaseModel], ...]) -> Any:
    return _ref(refs, ms[0]) if len(ms) == 1 else {"oneOf": [_ref(refs, m) for m in ms]}


def _message(name: str, title: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "title": title, "contentType": "application/json", "payload": payload}


def document(version: str = __version__) -> dict[str, Any]:
    refs, schemas = _schemas()
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    error = _ref(refs, outputs.ErrorData)

    messages["auth"] = _message(
        "auth",
        "First frame: the token, when no header, query or subprotocol carried it",
        _client_envelope("auth", _ref(refs, AuthData)),
    )
    messages["error"] = _message(
        "error",
        "A refused frame (replyTo its id) or an unreadable one (replyTo null)",
        _server_envelope({"const": "error"}, error, reply=None, seq=False),
    )
    for type_, route in ROUTES.items():
        if type_ not in outputs.REPLIES:
            raise KeyError(f"no reply model for {type_!r} in gateway/outputs.py")
        request = f"{type_}.request"
        reply = f"{type_}.reply"
        reply_type = route.reply_type or type_
        messages[request] = _message(
            type_, f"Client frame {type_}", _client_envelope(type_, _ref(refs, route.model))
        )
        messages[reply] = _message(
            reply_type,
            f"Reply to {type_}",
            _server_envelope(
                {"const": reply_type},
                _one(refs, outputs.REPLIES[type_]),
                reply=True,
                seq=False,
            ),
        )
        operations[f"receive.{type_}"] = {
            "action": "receive",
            "channel": {"$ref": _CHANNEL},
            "messages": [{"$ref": f"{_CHANNEL}/messages/{request}"}],
            "reply": {
                "channel": {"$ref": _CHANNEL},
                "messages": [
                    {"$ref": f"{_CHANNEL}/messages/{reply}"},
                    {"$ref": f"{_CHANNEL}/messages/error"},
                ],
            },
        }
    known = sorted({"error", *(r.reply_type or t for t, r in ROUTES.items()), *outputs.PUSHED})
    pushed: list[str] = []
    for type_, (model, seq) in outputs.PUSHED.items():
        messages[type_] = _message(
            type_,
            f"Pushed frame {type_}",
            _server_envelope({"const": type_}, _ref(refs, model), reply=False, seq=seq),
        )
        pushed.append(type_)
    messages["session-notice"] = _message(
        "session-notice",
        "Any other event of the bound session (plan mode, the hub's frames)",
        _server_envelope(
            {"type": "string", "not": {"enum": known}},
            _ref(refs, outputs.SessionNoticeData),
            reply=False,
            seq=True,
        ),
    )
    pushed.append("session-notice")
    operations["receive.auth"] = {
        "action": "receive",
        "channel": {"$ref": _CHANNEL},
        "messages": [{"$ref": f"{_CHANNEL}/messages/auth"}],
    }
    operations["send.pushed"] = {
        "action": "send",
        "channel": {"$ref": _CHANNEL},
        "messages": [{"$ref": f"{_CHANNEL}/messages/{n}"} for n in [*pushed, "error"]],
    }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Vancetope gateway WebSocket",
            "version": version,
            "description": (
                f"Protocol version {PROTOCOL_VERSION}. One JSON text message per frame; "
                "docs/protocol.md describes each frame and its errors."
            ),
        },
        "servers": {
            "gateway": {
                "host": "localhost:8080",
                "protocol": "ws",
                "description": "gateway.host:gateway.port (docs/operations.md)",
                "security": [
                    {"$ref": "#/components/securitySchemes/bearer"},
                    {"$ref": "#/components/securitySchemes/queryToken"},
                ],
            }
        },
        "channels": {
            "socket": {
                "address": "/brain/{tenant}/ws",
                "parameters": {"tenant": {"description": "The tenant of the caller's token"}},
                "messages": {name: {"$ref": f"#/components/messages/{name}"} for name in messages},
            }
        },
        "operations": operations,
        "components": {
            "messages": messages,
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "queryToken": {"type": "httpApiKey", "name": "token", "in": "query"},
            },
        },
    }


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"write {CHECKED_IN}")
    args = parser.parse_args()
    text = render(document())
    if args.write:
        CHECKED_IN.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
