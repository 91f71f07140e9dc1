"""The model calls' connections to one origin (vance/llm_wire.py's Connection): at most
`llm.max_connections` in use, idle ones kept alive and reused, a stale one replaced once."""

from __future__ import annotations

import asyncio
import ssl

from vance.llm_wire import BodyReader, Connection, Origin, Stale, Unreachable

# How long an idle connection is kept (aiohttp's default keep-alive): a worker between turns
# reuses its connections; a provider closes its own idle ones after a minute or so.
KEEPALIVE_S = 15.0


class Pool:
    """Keep-alive connections to one origin: at most `limit` calls at once (a call beyond it
    waits, as aiohttp's connector limit made it), idle connections reused newest first (the
    oldest age out) and closed after KEEPALIVE_S by one timer for the pool, a connection the
    server closed or asked to close never reused."""

    def __init__(self, origin: Origin, limit: int) -> None:
        self._origin = origin
        self._slots = asyncio.Semaphore(limit)
        self._idle: list[Connection] = []  # oldest first
        self._timer: asyncio.TimerHandle | None = None
        self._tls: ssl.SSLContext | None = None
        self._closed = False

    async def call(self, request: list[bytes], reader: BodyReader) -> None:
        """One exchange on a pooled or new connection. A reused connection that closes before
        the answer begins is replaced once (the server may have closed it as it sat idle);
        nothing else is retried (the lane retries turns)."""
        async with self._slots:
            reused = self._checkout()
            if reused is not None:
                try:
                    await reused.exchange(request, reader)
                    return
                except Stale:
                    pass
                finally:
                    # Also when cancelled or timed out mid-answer: such a connection is closed.
                    self._checkin(reused)
            conn = await self._connect()
            try:
                await conn.exchange(request, reader)
            finally:
                self._checkin(conn)

    async def aclose(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _checkout(self) -> Connection | None:
        idle = self._idle
        if not idle:
            return None
        expired = asyncio.get_running_loop().time() - KEEPALIVE_S
        while idle:
            conn = idle.pop()
            if (
                conn.lost
                or conn.draining
                or conn.idle_since <= expired
                or conn.transport is None
                or conn.transport.is_closing()  # closed, connection_lost not called yet
            ):
                conn.close()
                continue
            conn.reused = True
            return conn
        return None

    async def _connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        origin = self._origin
        tls: ssl.SSLContext | None = None
        if origin.tls:
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        conn = Connection()
        try:
            await loop.create_connection(
                lambda: conn,
                origin.host,
                origin.port,
                ssl=tls,
                server_hostname=origin.host if tls is not None else None,
            )
        except OSError as exc:  # refused, no route, no such host, a failed TLS handshake
            raise Unreachable(str(exc)) from exc
        return conn

    def _checkin(self, conn: Connection) -> None:
        keep = conn.reusable
        if not keep and conn.whole_but_draining:
            conn.draining = keep = True
        conn.release()
        if not keep or self._closed:
            conn.close()
            return
        loop = asyncio.get_running_loop()
        conn.idle_since = loop.time()
        self._idle.append(conn)
        if self._timer is None:
            self._timer = loop.call_at(conn.idle_since + KEEPALIVE_S, self._sweep)

    def _sweep(self) -> None:
        """Closes the connections idle for KEEPALIVE_S, and comes back when the next is due."""
        self._timer = None
        loop = asyncio.get_running_loop()
        expired = loop.time() - KEEPALIVE_S
        idle = self._idle
        old = 0
        while old < len(idle) and (idle[old].idle_since <= expired or idle[old].lost):
            idle[old].close()
            old += 1
        del idle[:old]
        if idle:
            self._timer = loop.call_at(idle[0].idle_since + KEEPALIVE_S, self._sweep)
