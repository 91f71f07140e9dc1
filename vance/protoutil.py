"""Conversions between google.protobuf Struct/Value and plain Python data."""

from __future__ import annotations

import math
from typing import Any

from google.protobuf import json_format, struct_pb2


def dict_to_struct(data: dict[str, Any] | None) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    if data:
        s.update(data)
    return s


def struct_to_dict(s: struct_pb2.Struct | None) -> dict[str, Any]:
    """What `json_format.MessageToDict` gives for a Struct (numbers as floats, an unset value as
    None, a non-finite number refused), read field by field: MessageToDict walks descriptors
    and was the largest single cost of a worker's turn (every chat message carries a Struct)."""
    if s is None or not s.fields:
        return {}  # most chat messages' meta: no items view to build
    return {k: _plain(v) for k, v in s.fields.items()}


def to_value(data: Any) -> struct_pb2.Value:
    v = struct_pb2.Value()
    json_format.ParseDict(data, v)
    return v


def from_value(v: struct_pb2.Value) -> Any:
    return _plain(v)


def _plain(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        n = v.number_value
        if not math.isfinite(n):
            raise ValueError(f"a Struct value is not JSON: {n}")
        return n
    if kind == "bool_value":
        return v.bool_value
    if kind == "struct_value":
        return {k: _plain(x) for k, x in v.struct_value.fields.items()}
    if kind == "list_value":
        return [_plain(x) for x in v.list_value.values]
    return None  # null_value, or no value set
