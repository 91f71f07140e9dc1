"""The JSON types of the true boundaries: a model's tool arguments before they are validated, a
free-form payload a tool passes on unread, a protobuf Struct turned into Python.

Pydantic's recursive `JsonValue` is the one type both mypy and pydantic understand (a field of
it is validated as JSON). Anything with a known shape gets a model instead of these."""

from __future__ import annotations

from typing import TypeAlias

from pydantic import JsonValue

__all__ = ["JsonObject", "JsonValue"]

JsonObject: TypeAlias = dict[str, JsonValue]
