"""What every process tool shares: the error a model can act on and argument readers."""

from __future__ import annotations

from typing import Any

import grpc

from vance.domain import ThinkProcess


class ToolError(Exception):
    pass


def arg_str(args: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = args.get(key)
    if value is None or value == "":
        if required:
            raise ToolError(f"'{key}' is required")
        return ""
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string")
    return value.strip()


def arg_bool(args: dict[str, Any], key: str, default: bool) -> bool:
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolError(f"'{key}' must be true or false")
    return value


def rpc_details(exc: Exception) -> str:
    """The message of a failed gRPC call, or of any other exception."""
    if isinstance(exc, grpc.aio.AioRpcError):
        return str(exc.details() or exc.code().name)
    return str(exc)


def spawn_result(child: ThinkProcess) -> dict[str, Any]:
    """What process_create answers (and process_create_delegate passes on as `process`)."""
    return {
        "name": child.name,
        "status": child.status.value,
        "engine": child.engine,
        "recipe": child.recipe_name,
    }
