"""The server interceptor every service installs (vance/server.py): one error mapping and the
RED metrics (rate, errors by code, duration) for every method, streaming ones included.

It sits after the auth interceptor (vance/authz.py), so the handler it is given is the one the
servicer registered, the same object for every call of a method: the wrapper is made once per
method and cached, and a call costs two clock reads and a few int updates (no locks,
vance/observability/red.py). Calls the auth interceptor refuses never reach it; that interceptor counts them
through `count_refusal`."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from vance import errors
from vance.observability import metrics

Continuation = Callable[
    [grpc.HandlerCallDetails], Awaitable["grpc.RpcMethodHandler[Any, Any] | None"]
]


class _Method:
    """The method's series (vance/observability/red.py), and its outcome names, found once."""

    __slots__ = ("series",)

    def __init__(self, full_method: str) -> None:
        service, _, method = full_method.lstrip("/").rpartition("/")
        self.series = metrics.GRPC.series(service, method)

    def done(self, start: float, code: grpc.StatusCode | None) -> None:
        self.series.observe(time.perf_counter() - start, "OK" if code is None else code.name)


_methods: dict[str, _Method] = {}


def _method(full_method: str) -> _Method:
    found = _methods.get(full_method)
    if found is None:
        found = _methods[full_method] = _Method(full_method)
    return found


def count_refusal(full_method: str, code: grpc.StatusCode) -> None:
    """A call the auth interceptor refused before it reached the servicer."""
    _method(full_method).series.count(code.name)


class ServerCalls(grpc.aio.ServerInterceptor):
    def __init__(self) -> None:
        # method -> (the registered handler, our wrapper of it)
        self._wrapped: dict[str, tuple[Any, grpc.RpcMethodHandler[Any, Any]]] = {}

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = _wrap(handler, _method(method))
        self._wrapped[method] = (handler, wrapped)
        return wrapped


def _outcome(context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode | None:
    code = context.code()
    return None if code is None or code == grpc.StatusCode.OK else code


def _code_of(exc: Exception) -> grpc.StatusCode:
    """The code errors.abort answers `exc` with."""
    if isinstance(exc, errors.VanceError):
        return exc.code
    if isinstance(exc, grpc.aio.AioRpcError) and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
        return exc.code()
    if isinstance(exc, NotImplementedError):
        return grpc.StatusCode.UNIMPLEMENTED
    return grpc.StatusCode.INTERNAL


def _wrap(handler: grpc.RpcMethodHandler[Any, Any], m: _Method) -> grpc.RpcMethodHandler[Any, Any]:
    # On a grpc.aio server the behaviours are coroutine functions or async generators (a
    # streaming one may also be a coroutine that writes through the context); grpc's stubs
    # type them as the synchronous ones, so they are called as Any.
    if handler.unary_unary is not None or handler.stream_unary is not None:
        unary: Any = handler.unary_unary or handler.stream_unary

        async def call_unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            start = time.perf_counter()
            try:
                reply = await unary(request, context)
            except grpc.aio.AbortError:
                m.done(start, _outcome(context))
                raise
            except Exception as exc:
                m.done(start, _code_of(exc))
                await errors.abort(context, exc)
            except asyncio.CancelledError:
                m.done(start, grpc.StatusCode.CANCELLED)
                raise
            m.done(start, _outcome(context))
            return reply

        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                call_unary, handler.request_deserializer, handler.response_serializer
            )
        return grpc.stream_unary_rpc_method_handler(
            call_unary, handler.request_deserializer, handler.response_serializer
        )

    streaming: Any = handler.unary_stream or handler.stream_stream

    async def call_stream(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        start = time.perf_counter()
        try:
            result = streaming(request, context)
            if inspect.isasyncgen(result):
                async for item in result:
                    yield item
            else:
                await result
        except grpc.aio.AbortError:
            m.done(start, _outcome(context))
            raise
        except Exception as exc:
            m.done(start, _code_of(exc))
            await errors.abort(context, exc)
        except (asyncio.CancelledError, GeneratorExit):
            # The caller went away: the usual end of a subscription.
            m.done(start, grpc.StatusCode.CANCELLED)
            raise
        m.done(start, _outcome(context))

    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            call_stream, handler.request_deserializer, handler.response_serializer
        )
    return grpc.stream_stream_rpc_method_handler(
        call_stream, handler.request_deserializer, handler.response_serializer
    )


def observe(full_method: str, start: float, code: grpc.StatusCode | None) -> None:
    """A call that did not come as a gRPC call of its own (one multiplexed on a stream,
    process_service's SteerStream), in its method's series as if it had: `start` is its
    `time.perf_counter()` at the start, `code` None when it succeeded."""
    _method(full_method).done(start, code)
