"""One MCP tool server as tool_service holds it: a connection made with the `mcp` package's
`Client`, kept open by its own task, its tools listed, and made again whenever it breaks (the
server restarted, its process died, the network dropped), so a server that comes back is used
again without anyone acting. While it is down, its tools are shown as unavailable, with the
reason, and a call answers that reason at once."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

# The SDK's own factory (its streamable-HTTP client uses it when given none): the MCP timeouts
# (a response stream may stay open for minutes) with our headers. Private in mcp 2.x, hence
# the pin below 3 in pyproject.toml.
from mcp.shared._httpx_utils import create_mcp_http_client

from vance.mcp_servers import SECRET_REF, McpServer

logger = logging.getLogger(__name__)
# The HTTP client under the mcp package logs every request at INFO: one line per tool call and
# per refresh, which would drown tool_service's own log.
logging.getLogger("httpx2").setLevel(logging.WARNING)

# How often a connected server's tool list is read again: it notices a server that changed its
# tools, and one that died without a call noticing (a broken list is a broken connection).
REFRESH_S = 10.0
# Between attempts to reach a server that is down; a call that needs it skips the wait.
BACKOFF_S = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
CONNECT_TIMEOUT_S = 20.0  # a stdio server starts a Python process: seconds on a busy machine
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64  # what model providers accept for a function name


class SecretMissing(Exception):
    pass


def resolve_headers(server: McpServer, secrets_dir: Path) -> dict[str, str]:
    """Header values with their `${secret:NAME}` references filled in from the secrets
    directory (one file per secret), so the setting never holds a secret's value."""

    def fill(match: re.Match[str]) -> str:
        path = secrets_dir / match.group(1)
        try:
            return path.read_text().strip()
        except OSError:
            raise SecretMissing(f"secret {match.group(1)!r} is not set on tool_service") from None

    return {k: SECRET_REF.sub(fill, v) for k, v in server.headers.items()}


def pool_name(server: str, tool: str) -> str:
    return f"{server}__{_NAME_CHARS.sub('_', tool)}"[:MAX_NAME]


class McpConnection:
    def __init__(
        self,
        server: McpServer,
        secrets_dir: Path,
        on_change: Callable[[], Awaitable[None]],
    ) -> None:
        self.server = server
        self._secrets_dir = secrets_dir
        self._on_change = on_change
        self.client: Client | None = None
        self.tools: list[Any] = []  # the last listing (kept while down, shown as unavailable)
        self.reason = "still connecting; try again shortly"
        self.attempted = asyncio.Event()  # the first connection attempt has ended
        self.up = asyncio.Event()
        self._broken = asyncio.Event()  # a call found the connection broken
        self._retry = asyncio.Event()  # someone needs the server: skip the back-off
        self.last_used = time.monotonic()

    def _target(self) -> Any:
        if self.server.command:
            return StdioServerParameters(
                command=self.server.command,
                args=list(self.server.args),
                env=dict(self.server.env) or None,  # None: the mcp package's safe default
            )
        http = create_mcp_http_client(headers=resolve_headers(self.server, self._secrets_dir))
        return streamable_http_client(self.server.url, http_client=http)

    async def run(self) -> None:
        """Until cancelled: connect, list, hold; after a break, wait a little and connect
        again (at once when a call needs the server)."""
        failures = 0
        while True:
            try:
                await self._hold()
                failures = 0
            except SecretMissing as exc:
                self.reason = str(exc)
            except Exception as exc:  # the mcp package raises exception groups too
                self.reason = _describe(exc)
                # Once per outage at INFO; every further attempt at DEBUG.
                log = logger.info if failures == 0 else logger.debug
                log("MCP server %s is down: %s", self.server.name, self.reason)
            self.attempted.set()
            await self._on_change()
            delay = BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]
            failures += 1
            self._retry.clear()
            try:
                async with asyncio.timeout(delay):
                    await self._retry.wait()
            except TimeoutError:
                pass

    async def _hold(self) -> None:
        """One connection, from connect to break. The client is entered and left in this task
        with `async with`: when its transport fails, the mcp package cancels the task that
        entered it and raises the failure on leaving, which ends up in run() as the reason."""
        target = self._target()
        async with AsyncExitStack() as stack:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                client = await stack.enter_async_context(Client(target, read_timeout_seconds=30))
                listed = await client.list_tools()
            self.tools = list(listed.tools)
            self._broken.clear()
            self.client = client
            self.reason = ""
            self.up.set()
            self.attempted.set()
            logger.info("MCP server %s: %d tools", self.server.name, len(self.tools))
            try:
                await self._on_change()
                await self._watch(client)
            finally:
                self.client = None
                self.up.clear()

    async def _watch(self, client: Client) -> None:
        """Returns never: raises when a call found the connection broken or a periodic
        listing fails; a changed listing is announced."""
        while True:
            try:
                async with asyncio.timeout(REFRESH_S):
                    await self._broken.wait()
                raise ConnectionError(self.reason or "the connection broke")
            except TimeoutError:
                pass
            async with asyncio.timeout(self.server.timeout_ms / 1000):
                listed = await client.list_tools()
            if [t.name for t in listed.tools] != [t.name for t in self.tools]:
                self.tools = list(listed.tools)
                await self._on_change()

    def broke(self, reason: str) -> None:
        """A call failed on the transport: reconnect now rather than at the next refresh."""
        self.reason = reason
        self._broken.set()

    async def wait_up(self, timeout_s: float) -> Client | None:
        """The client, waiting up to `timeout_s` for a reconnect (started now) when down."""
        self.last_used = time.monotonic()
        if self.client is None:
            self._retry.set()
            try:
                async with asyncio.timeout(timeout_s):
                    await self.up.wait()
            except TimeoutError:
                return None
        return self.client


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text[:300]
