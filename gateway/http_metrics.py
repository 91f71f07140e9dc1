"""RED metrics of the gateway's HTTP routes: requests by method, route template and status, and
their duration (vance/observability/metrics.py). A plain ASGI middleware: the route template
comes from the scope after routing (Starlette puts the matched route there), so ids in paths
never become label values. WebSockets pass through untouched (they are counted by
`vance_ws_connections` and the frames' own metrics)."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vance.observability import metrics

_UNMATCHED = "unmatched"


class RouteMetrics:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # what the client gets if the app fails before answering

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = getattr(scope.get("route"), "path", None) or _UNMATCHED
            method = str(scope.get("method", ""))
            metrics.HTTP.series(method, route).observe(time.perf_counter() - start, str(status))
