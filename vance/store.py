"""The store connection: PyMongo's asyncio client against FerretDB or MongoDB."""

from __future__ import annotations

import logging
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError

from vance import store_trace
from vance.config import Config
from vance.observability.metrics import store_listeners
from vance.store_wire import CommandObserver, HotCommands, WirePool, wire_address

logger = logging.getLogger(__name__)

Document = dict[str, Any]


def connect(config: Config) -> tuple[AsyncMongoClient[Document], AsyncDatabase[Document]]:
    client: AsyncMongoClient[Document] = AsyncMongoClient(
        config.mongodb_uri,
        serverSelectionTimeoutMS=10_000,
        # Several small writes per turn: keep enough connections for concurrent lanes.
        maxPoolSize=64,
        tz_aware=False,
        event_listeners=[
            *store_trace.listeners(),
            *store_listeners(config.observability.metrics_port),
        ],
    )
    return client, client[config.store.db_name]


def hot_commands(config: Config, db: AsyncDatabase[Document]) -> HotCommands:
    """The turn path's commands (vance/store_wire.py): sent directly where the store's URI
    allows and `store.wire` is on, else through PyMongo."""
    address = wire_address(config.mongodb_uri) if config.store.wire else None
    if address is None:
        return HotCommands(db)
    observers: list[CommandObserver] = [
        *store_trace.listeners(),
        *store_listeners(config.observability.metrics_port),
    ]
    pool = WirePool(
        *address,
        config.store.db_name,
        max_size=config.store.wire_connections,
        observers=observers,
    )
    return HotCommands(db, pool)


def is_duplicate_key(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    return code == 11000 or "E11000" in str(exc)


def only_duplicates(exc: BulkWriteError) -> bool:
    """The bulk write failed on existing `_id`s alone (an ordered insert stopped at the first:
    `nInserted` went in before it), nothing else."""
    errors = exc.details.get("writeErrors") or []
    return bool(errors) and all(e.get("code") == 11000 for e in errors)
