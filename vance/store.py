"""The store connection: PyMongo's asyncio client against FerretDB or MongoDB."""

from __future__ import annotations

import logging
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase

from vance import store_trace
from vance.config import Config
from vance.observability.metrics import store_listeners

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


def is_duplicate_key(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    return code == 11000 or "E11000" in str(exc)
