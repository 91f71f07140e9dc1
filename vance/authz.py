"""The server side of gRPC credentials: one interceptor every service installs.

No valid token -> UNAUTHENTICATED. A service token may call every method. A user token may call
only the methods vance/policy.py lists, and only on its own tenant and sessions (or its tenant's
sessions for a tenant admin) -> PERMISSION_DENIED otherwise. The verified caller is put in
`vance.auth.current_identity` for the servicer. Health and reflection stay open, so probes and
grpcurl's discovery work without a token.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from vance.auth import Identity, Verifier, bearer_token, current_identity
from vance.errors import VanceError, abort
from vance.observability import logcontext, tracing
from vance.policy import RULES, Owners
from vance.rpc_calls import count_refusal

logger = logging.getLogger(__name__)

_OPEN_PREFIXES = ("/grpc.health.v1.", "/grpc.reflection.")


async def _refuse(
    method: str, context: grpc.aio.ServicerContext[Any, Any], error: VanceError
) -> None:
    """The refusal with the same rich status as any error (vance/errors.py), counted in the
    method's RED metrics (vance/rpc_calls.py), which the refused call never reaches."""
    count_refusal(method, error.code)
    await abort(context, error)


def _unauthenticated(token: str) -> VanceError:
    from vance.errors import UnauthenticatedError

    if not token:
        return UnauthenticatedError(
            "credentials are required: metadata 'authorization: Bearer <token>'",
            reason="token_required",
        )
    return UnauthenticatedError("the token is invalid, expired or revoked", reason="bad_token")


class AuthInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, verifier: Verifier, owners: Owners | None = None) -> None:
        self._verifier = verifier
        self._owners = owners
        self.admission = Admission(verifier, owners)

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        details = handler_call_details
        handler = await continuation(details)
        method: str = details.method
        if handler is None or method.startswith(_OPEN_PREFIXES):
            return handler
        token = bearer_token(details.invocation_metadata)
        identity = self._verifier.verify(token) if token else None
        return _wrap(handler, method, identity, token, self._owners)


async def check(
    method: str,
    identity: Identity | None,
    token: str,
    request: Any,
    owners: Owners | None,
) -> Identity:
    """The caller of `method` with this request, or the VanceError it is refused with."""
    if identity is None:
        raise _unauthenticated(token)
    if not identity.is_service:
        from vance.errors import PermissionDeniedError

        rule = RULES.get(method)
        if rule is None:
            raise PermissionDeniedError(f"{method} is for services only", reason="service_only")
        try:
            await rule(request, identity, owners)
        except grpc.aio.AioRpcError as exc:
            # The owner lookup asks session_service, which may be restarting: the caller gets
            # UNAVAILABLE and retries (the gateway resubscribes), not an unexpected UNKNOWN.
            from vance.errors import UnavailableError

            raise UnavailableError(
                f"cannot check the owner now: {exc.code().name}", reason="owner_lookup"
            ) from exc
    return identity


class Admission:
    """The checks of this interceptor for a call that does not come as a gRPC call of its own:
    one multiplexed on a stream (process_service's SteerStream), which names its user's token
    in the request. The same token verification (cache, revocations) and the same rule."""

    def __init__(self, verifier: Verifier, owners: Owners | None) -> None:
        self._verifier = verifier
        self._owners = owners

    async def admit(self, method: str, token: str, request: Any) -> Identity:
        """The caller (also set as `current_identity`), or the VanceError it is refused with,
        counted in the method's RED metrics as a refused call is."""
        identity = self._verifier.verify(token) if token else None
        try:
            who = await check(method, identity, token, request, self._owners)
        except VanceError as error:
            count_refusal(method, error.code)
            raise
        current_identity.set(who)
        logcontext.from_request(request)
        return who


async def _admit(
    method: str,
    identity: Identity | None,
    token: str,
    request: Any,
    context: grpc.aio.ServicerContext[Any, Any],
    owners: Owners | None,
) -> bool:
    """Sets the caller for the servicer, or aborts the call; False when aborted."""
    try:
        identity = await check(method, identity, token, request, owners)
    except VanceError as error:
        await _refuse(method, context, error)
        return False
    current_identity.set(identity)
    logcontext.from_request(request)
    tracing.annotate(request)
    return True


def _wrap(
    handler: grpc.RpcMethodHandler[Any, Any],
    method: str,
    identity: Identity | None,
    token: str,
    owners: Owners | None,
) -> grpc.RpcMethodHandler[Any, Any]:
    # On a grpc.aio server the handler's behaviours are coroutine functions (or async
    # generators); grpc's stubs type them as the synchronous ones, so they are called as Any.
    if handler.unary_unary is not None:
        inner_uu: Any = handler.unary_unary

        async def unary_unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if not await _admit(method, identity, token, request, context, owners):
                return None
            return await inner_uu(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary_unary, handler.request_deserializer, handler.response_serializer
        )
    if handler.unary_stream is not None:
        inner_us: Any = handler.unary_stream

        async def unary_stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            if not await _admit(method, identity, token, request, context, owners):
                return
            result = inner_us(request, context)
            if inspect.isasyncgen(result):
                async for item in result:
                    yield item
            else:
                await result

        return grpc.unary_stream_rpc_method_handler(
            unary_stream, handler.request_deserializer, handler.response_serializer
        )
    if handler.stream_unary is not None:
        inner_su: Any = handler.stream_unary

        async def stream_unary(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if not await _admit(method, identity, token, None, context, owners):
                return None
            return await inner_su(requests, context)

        return grpc.stream_unary_rpc_method_handler(
            stream_unary, handler.request_deserializer, handler.response_serializer
        )
    inner_ss: Any = handler.stream_stream

    async def stream_stream(
        requests: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        if not await _admit(method, identity, token, None, context, owners):
            return
        result = inner_ss(requests, context)
        if inspect.isasyncgen(result):
            async for item in result:
                yield item
        else:
            await result

    return grpc.stream_stream_rpc_method_handler(
        stream_stream, handler.request_deserializer, handler.response_serializer
    )
