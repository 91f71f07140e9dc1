"""The client side of gRPC credentials: every outgoing call carries a bearer token.

The token is the user's when the call is made on behalf of one (`vance.auth.on_behalf_of`, set
by the gateway per request or socket), else this process's service token. Call sites do not
change: the interceptor sits on the channels vance/channels.py opens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc

from vance.auth import ServiceCredential, on_behalf_of
from vance.observability import tracing


def _with_token(
    details: grpc.aio.ClientCallDetails, header: str, timeout: float | None
) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata()
    if details.metadata is not None:
        for key, value in details.metadata:
            if key != "authorization":
                metadata.add(key, value)
    metadata.add("authorization", header)
    return grpc.aio.ClientCallDetails(
        details.method, timeout, metadata, details.credentials, details.wait_for_ready
    )


class _Credentials:
    def __init__(self, credential: ServiceCredential, timeout_s: float | None = None) -> None:
        self._credential = credential
        self._timeout_s = timeout_s  # the deadline of a call that sets none (unary only)

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        user = on_behalf_of.get()
        timeout = self._timeout_s if details.timeout is None else details.timeout
        return _with_token(
            details, f"Bearer {user}" if user else self._credential.header(), timeout
        )


class _UnaryUnary(_Credentials, grpc.aio.UnaryUnaryClientInterceptor):
    """Also gives a call that sets no deadline the channel's default (`timeout_s`): a peer that
    never answers fails the call with DEADLINE_EXCEEDED instead of hanging its caller. Streams
    get none: they last as long as their connection (a worker's WorkerConnect, a gateway's
    FollowSessions, the watches), and keepalive finds a dead peer under them."""

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(self._details(details), request)


class _UnaryStream(_Credentials, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(self._details(details), request)


class _StreamUnary(_Credentials, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(
        self,
        continuation: Callable[..., Any],
        details: grpc.aio.ClientCallDetails,
        request_iterator: Any,
    ) -> Any:
        return await continuation(self._details(details), request_iterator)


class _StreamStream(_Credentials, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(
        self,
        continuation: Callable[..., Any],
        details: grpc.aio.ClientCallDetails,
        request_iterator: Any,
    ) -> Any:
        return await continuation(self._details(details), request_iterator)


def credential_interceptors(
    credential: ServiceCredential, *, timeout_s: float | None = None
) -> Sequence[grpc.aio.ClientInterceptor]:
    """One interceptor per call shape (grpc.aio dispatches on the interceptor's class);
    `timeout_s`: the deadline of a unary call that sets none."""
    return [
        _UnaryUnary(credential, timeout_s),  # the streams get no default deadline
        _UnaryStream(credential),
        _StreamUnary(credential),
        _StreamStream(credential),
        *tracing.client_interceptors(),
    ]


def authed_channel(
    address: str, credential: ServiceCredential, *, timeout_s: float | None = None, **kwargs: Any
) -> grpc.aio.Channel:
    """An insecure (loopback or in-cluster) channel whose calls carry credentials (and, with
    `timeout_s`, a default deadline)."""
    return grpc.aio.insecure_channel(
        address, interceptors=credential_interceptors(credential, timeout_s=timeout_s), **kwargs
    )
