"""Argument checks shared by the user's tools. Numbers arrive through a protobuf Struct, which
has only doubles: a whole float is the integer the model wrote."""

from __future__ import annotations

from process_service.tool_args import ToolError, reasoned
from vance.json_types import JsonValue


def whole(value: JsonValue, name: str, low: int, high: int, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ToolError(f"'{name}' must be a whole number from {low} to {high}")
    return value


def whole_checked(
    value: JsonValue, name: str, low: int, high: int, default: int | None = None
) -> int:
    """`whole` inside a ToolArgs validator."""
    return reasoned(lambda: whole(value, name, low, high, default))
