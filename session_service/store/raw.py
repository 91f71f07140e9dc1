"""The one name for a document as PyMongo reads and writes it. Only the store modules (the
ones that know field names and update operators) use it; everything else gets the typed
records they return (domain/models.py)."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

# JSON boundary: a BSON document, as PyMongo's API types it (vance/store.py `Document`).
Bson = dict[str, Any]
Db = AsyncDatabase[Bson]
Collection = AsyncCollection[Bson]
