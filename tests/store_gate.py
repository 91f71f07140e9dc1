"""A TCP relay in front of the real store whose requests can be held: a client connected
through it sees the store as slow (its commands wait, nothing fails) until they are let go.
For tests of what a replica does while a read of the store is late rather than failed; the
store behind it is the test system's FerretDB, unchanged."""

from __future__ import annotations

import asyncio
import contextlib

from pymongo.uri_parser import parse_uri


class StoreGate:
    def __init__(self, mongodb_uri: str) -> None:
        self._upstream = parse_uri(mongodb_uri)["nodelist"][0]
        self._open = asyncio.Event()
        self._open.set()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def hold(self) -> None:
        """Requests sent from now on wait (those already passed get their answers)."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def close(self) -> None:
        self._open.set()
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.close()
        if self._server is not None:
            await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = self._upstream
        up_reader, up_writer = await asyncio.open_connection(host, port)
        self._writers |= {writer, up_writer}
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._pump(reader, up_writer, gated=True))
                tg.create_task(self._pump(up_reader, writer, gated=False))
        except* (ConnectionError, OSError):
            pass
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.close()

    async def _pump(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, *, gated: bool
    ) -> None:
        try:
            while data := await src.read(65536):
                if gated:
                    await self._open.wait()
                dst.write(data)
                await dst.drain()
        finally:
            # One side ended: end the other, so the relay's pair of pumps both return.
            with contextlib.suppress(Exception):
                dst.close()
