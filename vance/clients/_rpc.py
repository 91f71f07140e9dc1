"""The one place the clients turn a peer's gRPC error into ours."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import grpc

from vance.errors import from_rpc_error

T = TypeVar("T")


async def call(pending: Awaitable[T]) -> T:
    """Awaits one unary call; a gRPC error becomes the matching `VanceError` (same status and
    reason), so the caller's own servicer passes it on unchanged."""
    try:
        return await pending
    except grpc.aio.AioRpcError as exc:
        raise from_rpc_error(exc) from exc
