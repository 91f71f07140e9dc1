"""Conversions between google.protobuf Struct/Value and plain Python data."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2


def dict_to_struct(data: dict[str, Any] | None) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    if data:
        s.update(data)
    return s


def struct_to_dict(s: struct_pb2.Struct | None) -> dict[str, Any]:
    if s is None:
        return {}
    return json_format.MessageToDict(s)


def to_value(data: Any) -> struct_pb2.Value:
    v = struct_pb2.Value()
    json_format.ParseDict(data, v)
    return v


def from_value(v: struct_pb2.Value) -> Any:
    return json_format.MessageToDict(v)
