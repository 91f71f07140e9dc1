"""The turn path's few store commands, sent as plain OP_MSG messages instead of through PyMongo.

Why: under `make bench` PyMongo's asyncio client spent about 270 us of CPU on each command
beyond encoding it (an implicit session, server selection, retryable-write bookkeeping, and
three tasks and two `asyncio.wait`s per reply, `pymongo/network_layer.py`), and a turn sends
five of them from process_service. Measured on this machine against the embedded FerretDB, a
compare-and-set plus an insert: 400 us of client CPU per command through PyMongo, 120-140 us
through this module, and the store itself spent less per command too (docs/operations.md,
"Store").

Only what the hot path needs is here: `findAndModify`, ordered `insert` and `update` on one
collection, with PyMongo's own error types so callers handle both paths alike. Everything
else (reads, indexes, bulk writes, the cold paths) stays on PyMongo, and so does every command
when the URI asks for what this module does not do (credentials, TLS, a replica set, several
hosts, options): `HotCollection` then hands the call to PyMongo's collection.

One request is in flight per connection (MongoDB answers a connection's requests in order, and
one slow command must not hold up another lane's); idle connections are reused, and a
connection whose request was cancelled or failed is closed rather than reused.
"""

from __future__ import annotations

import asyncio
import itertools
import struct
import time
from collections.abc import Sequence
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

import bson
from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    DuplicateKeyError,
    OperationFailure,
    WriteError,
)

Document = dict[str, Any]

_OP_MSG = 2013
_HEADER = struct.Struct("<iiiiI")  # length, request id, response to, op code, flag bits
_CHECKSUM_PRESENT = 1
_MORE_TO_COME = 2
# A command this size or larger goes through PyMongo, which splits batches and knows the
# server's limits (the hot path's documents are a few KB).
_MAX_BODY = 8 * 1024 * 1024
_request_ids = itertools.count(1)
# Pauses between attempts to reach a store that refuses connections (see `WirePool._connect`).
_RECONNECT_FIRST_S = 0.05
_RECONNECT_MAX_S = 0.5


class CommandObserver(Protocol):
    """Told of every command sent here (the bench's command counts, the store timer), as
    PyMongo's command listeners are told of its own."""

    def observed(self, name: str, collection: str, seconds: float, failed: bool) -> None: ...


def wire_address(uri: str) -> tuple[str, int] | None:
    """(host, port) when the URI names one host and nothing this module does not do."""
    parts = urlsplit(uri)
    if parts.scheme != "mongodb" or parts.query or "@" in parts.netloc or "," in parts.netloc:
        return None
    try:
        host, port = parts.hostname, parts.port or 27017
    except ValueError:
        return None
    return (host, port) if host else None


class _Connection(asyncio.Protocol):
    """One socket to the store; at most one request waits on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._buffer = bytearray()
        self._waiter: asyncio.Future[bytes] | None = None
        self._request_id = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports (the services' loop) are not asyncio.Transport subclasses.
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(AutoReconnect(f"store connection lost: {exc or 'closed by the server'}"))

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) < _HEADER.size:
            return
        length, _, response_to, op_code, flags = _HEADER.unpack_from(self._buffer)
        if len(self._buffer) < length:
            return
        waiter = self._waiter
        if (
            len(self._buffer) > length
            or op_code != _OP_MSG
            or response_to != self._request_id
            or flags & _MORE_TO_COME
            or self._buffer[_HEADER.size] != 0
            or waiter is None
        ):
            self.close()
            self._fail(AutoReconnect(f"unexpected reply from the store (op code {op_code})"))
            return
        end = length - 4 if flags & _CHECKSUM_PRESENT else length
        body = bytes(self._buffer[_HEADER.size + 1 : end])
        self._buffer.clear()
        self._waiter = None
        if not waiter.done():
            waiter.set_result(body)

    def send(self, body: bytes) -> asyncio.Future[bytes]:
        assert self.transport is not None and self._waiter is None
        self._request_id = next(_request_ids) & 0x7FFFFFFF
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        header = _HEADER.pack(_HEADER.size + 1 + len(body), self._request_id, 0, _OP_MSG, 0)
        self.transport.write(header + b"\x00" + body)
        return waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _fail(self, exc: Exception) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)


class TooBig(Exception):
    """The command is too large for this module; `HotCollection` sends it through PyMongo."""


class WirePool:
    """Connections to one store host, opened as needed and reused while healthy."""

    def __init__(
        self,
        host: str,
        port: int,
        db_name: str,
        *,
        max_size: int = 64,
        connect_timeout_s: float = 10.0,
        observers: Sequence[CommandObserver] = (),
    ) -> None:
        self._host, self._port, self._db = host, port, db_name
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(max_size)
        self._connect_timeout_s = connect_timeout_s
        self._observers = tuple(observers)

    async def command(self, cmd: Document) -> Document:
        """Runs one command (its first key names it) and returns the reply; a reply with
        `ok: 0` raises OperationFailure, a lost connection AutoReconnect."""
        name = next(iter(cmd))
        collection = str(cmd[name])
        cmd["$db"] = self._db
        body = bson.encode(cmd)
        if len(body) >= _MAX_BODY:
            raise TooBig(len(body))
        start = time.perf_counter()
        failed = True
        try:
            async with self._slots:
                conn = await self._checkout()
                try:
                    raw = await conn.send(body)
                except BaseException:
                    # Cancelled or lost mid-request: the reply, if any, would answer the next
                    # request sent on this socket.
                    conn.close()
                    raise
                self._idle.append(conn)
            reply = bson.decode(raw)
            if reply.get("ok") != 1:
                raise OperationFailure(
                    str(reply.get("errmsg", "command failed")), reply.get("code"), reply
                )
            failed = False
            return reply
        finally:
            if self._observers:
                seconds = time.perf_counter() - start
                for observer in self._observers:
                    observer.observed(name, collection, seconds, failed)

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    async def _checkout(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        return await self._connect()

    async def _connect(self) -> _Connection:
        """A new connection. A store that refuses is tried again for up to the connect
        timeout, as PyMongo's server selection waits (a store restarting answers a turn late
        rather than failing it); nothing has been sent yet, so trying again is safe."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._connect_timeout_s
        pause = _RECONNECT_FIRST_S
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    _, conn = await loop.create_connection(_Connection, self._host, self._port)
                return conn
            except (OSError, TimeoutError) as exc:
                if loop.time() + pause >= deadline:
                    raise AutoReconnect(f"store at {self._host}:{self._port}: {exc!r}") from exc
            await asyncio.sleep(pause)
            pause = min(2 * pause, _RECONNECT_MAX_S)


class HotCollection:
    """The hot commands on one collection: over `WirePool` when there is one, else PyMongo.
    Results and errors are PyMongo's either way."""

    def __init__(self, collection: AsyncCollection[Document], pool: WirePool | None) -> None:
        self._collection = collection
        self._name = collection.name
        self._pool = pool

    async def _wire(self, cmd: Document) -> Document | None:
        """The command's reply over the wire; None when PyMongo must send it (no pool, or a
        command too large for this module)."""
        if self._pool is None:
            return None
        try:
            return await self._pool.command(cmd)
        except TooBig:
            return None

    async def find_one_and_update(
        self,
        filter: Document,
        update: Document,
        *,
        return_document: bool = ReturnDocument.BEFORE,
        upsert: bool = False,
    ) -> Document | None:
        cmd: Document = {"findAndModify": self._name, "query": filter, "update": update}
        if return_document:
            cmd["new"] = True
        if upsert:
            cmd["upsert"] = True
        try:
            reply = await self._wire(cmd)
        except OperationFailure as exc:
            if exc.code == 11000:
                raise DuplicateKeyError(str(exc), exc.code, exc.details) from None
            raise
        if reply is None:
            return await self._collection.find_one_and_update(
                filter, update, return_document=return_document, upsert=upsert
            )
        value = reply.get("value")
        return value if isinstance(value, dict) else None

    async def insert_many(self, docs: list[Document], *, ordered: bool = True) -> None:
        """Inserts in one command; a write error raises BulkWriteError with `nInserted`, as
        PyMongo's `insert_many` does."""
        for doc in docs:
            if "_id" not in doc:
                doc["_id"] = ObjectId()
        cmd: Document = {"insert": self._name, "documents": docs, "ordered": ordered}
        reply = await self._wire(cmd)
        if reply is None:
            await self._collection.insert_many(docs, ordered=ordered)
            return
        errors = reply.get("writeErrors")
        if errors:
            raise BulkWriteError(_bulk_details(reply, errors))

    async def update_one(self, filter: Document, update: Document, *, upsert: bool = False) -> int:
        """Returns how many documents matched (0 or 1), counting an upsert as a match."""
        cmd: Document = {
            "update": self._name,
            "updates": [{"q": filter, "u": update, "upsert": upsert, "multi": False}],
        }
        reply = await self._wire(cmd)
        if reply is None:
            result = await self._collection.update_one(filter, update, upsert=upsert)
            return result.matched_count + (1 if result.upserted_id is not None else 0)
        errors = reply.get("writeErrors")
        if errors:
            first = errors[0]
            kind = DuplicateKeyError if first.get("code") == 11000 else WriteError
            raise kind(str(first.get("errmsg", "write failed")), first.get("code"), first)
        return int(reply.get("n", 0))


class HotCommands:
    """`HotCollection`s of one database, sharing one pool (none: PyMongo for everything)."""

    def __init__(self, db: AsyncDatabase[Document], pool: WirePool | None = None) -> None:
        self._db = db
        self._pool = pool

    def collection(self, name: str) -> HotCollection:
        return HotCollection(self._db[name], self._pool)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()


def _bulk_details(reply: Document, errors: list[Document]) -> Document:
    return {
        "writeErrors": errors,
        "writeConcernErrors": [],
        "nInserted": int(reply.get("n", 0)),
        "nUpserted": 0,
        "nMatched": 0,
        "nModified": 0,
        "nRemoved": 0,
        "upserted": [],
    }
