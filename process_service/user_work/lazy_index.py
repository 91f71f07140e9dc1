"""An owner index made once per process, on the first use of its collection.

The user's own documents and facts are read by owner and path or subject; everything else in
the store is read by `_id`, so these are the only secondary indexes and they are made where
they are used, not at start-up (a tenant that never uses the tools never pays for them)."""

from __future__ import annotations

import asyncio

from pymongo import ASCENDING
from pymongo.asynchronous.collection import AsyncCollection

from vance.store import Document


class LazyIndex:
    def __init__(self, collection: AsyncCollection[Document], field: str, name: str) -> None:
        self._c = collection
        self._keys = [("tenant_id", ASCENDING), ("user_id", ASCENDING), (field, ASCENDING)]
        self._name = name
        self._made = False
        self._lock = asyncio.Lock()

    async def ready(self) -> None:
        if self._made:
            return
        async with self._lock:
            if not self._made:
                await self._c.create_index(self._keys, name=self._name)
                self._made = True
