"""Helpers for the user's-own-work tests: a fresh tenant per test (its settings are its own),
a hub connection there, tool results as Eddie's model saw them, and a scripted HTTP server
(search answers, pages, redirects) that records every request it gets."""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.eddie_support import call
from tests.harness import System, WsClient
from vance.testing.scripted_llm import Rule
from vance.v1 import session_pb2 as spb


def new_tenant() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


async def tenant_user(system: System, tenant: str, *, admin: bool = False) -> tuple[str, str]:
    name = f"u{uuid.uuid4().hex[:10]}"
    await system.sessions.CreateUser(
        spb.CreateUserRequest(
            tenant_id=tenant, username=name, password="pw", roles=["admin"] if admin else []
        )
    )
    return name, await system.login(name, "pw", tenant)


async def set_tenant(system: System, tenant: str, values: dict[str, str]) -> None:
    await system.sessions.UpdateSettings(
        spb.UpdateSettingsRequest(
            tenant_id=tenant, caller=spb.Caller(user_id="admin", roles=["admin"]), set=values
        )
    )


async def hub_in(system: System, tenant: str, token: str) -> tuple[WsClient, dict[str, Any]]:
    client = await system.connect(token, tenant)
    opened = await client.ok("session-create", {"hub": True})
    return client, opened


def tools_then_answer(marker: str, calls: list[dict[str, Any]], answer: str) -> list[Rule]:
    """Eddie's model: on the user's line with `marker`, call the tools (one step), then answer."""
    return [
        Rule(match_last=marker, tool_calls=calls),
        Rule(
            match=marker,
            match_last="tool_call_id",
            tool_calls=[call("answer", message=answer)],
        ),
    ]


def tool_results(system: System, marker: str) -> list[Any]:
    """The tool results of the turn with `marker`, in call order, as the model read them."""
    requests = [r for r in system.model_requests(marker) if "tool_call_id" in json.dumps(r)]
    assert requests, f"no model request with tool results for {marker}"
    return [json.loads(m["content"]) for m in requests[-1]["messages"] if m.get("role") == "tool"]


def offered_tools(system: System, marker: str) -> set[str]:
    requests = system.model_requests(marker)
    assert requests, f"no model request for {marker}"
    return {t["function"]["name"] for t in requests[0].get("tools") or []}


async def rest_in(
    system: System, tenant: str, method: str, path: str, token: str
) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.request(
            method,
            f"http://{system.gateway}/brain/{tenant}{path}",
            headers={"Authorization": f"Bearer {token}"},
        )


PAGE = """<html><head><title>Primes {m}</title><style>.x {{color: red}}</style>
<script>var secret = "script-{m}";</script></head>
<body><h1>Prime numbers {m}</h1><p>A prime has exactly <b>two</b> divisors.</p>
<ul><li>2</li><li>3</li></ul></body></html>"""


@dataclass
class PageServer:
    marker: str
    port: int = 0
    seen: list[str] = field(default_factory=list)  # every path (with query) requested

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def page_server(marker: str) -> Iterator[PageServer]:
    """Loopback HTTP: /search (SearXNG-shaped JSON), /page (HTML), /hop (302 to `to`), /big."""
    state = PageServer(marker)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_GET(self) -> None:
            state.seen.append(self.path)
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/search":
                q = query.get("q", [""])[0]
                body = json.dumps(
                    {
                        "query": q,
                        "results": [
                            {
                                "title": f"Result for {q}",
                                "url": f"https://example.org/{marker}",
                                "content": f"about {q}",
                            }
                        ],
                    }
                ).encode()
                self._send(200, "application/json", body)
            elif url.path == "/page":
                self._send(200, "text/html; charset=utf-8", PAGE.format(m=marker).encode())
            elif url.path == "/big":
                self._send(200, "text/plain", b"x" * 50_000)
            elif url.path == "/hop":
                self.send_response(302)
                self.send_header("Location", query.get("to", ["/page"])[0])
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send(404, "text/plain", b"not here")

        def _send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
