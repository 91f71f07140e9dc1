"""OpenTelemetry traces: off unless an OTLP endpoint or a trace file is configured. Then every
gRPC call (client and server), the gateway's HTTP and WebSocket requests, store commands, turns
and model calls are spans, one trace per user request across the processes, with the session,
process and turn ids as attributes. Off, every hook here is a flag test."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from vance.config import ObservabilityConfig
from vance.observability import logcontext

_state: dict[str, Any] = {"on": False}
_ATTRIBUTES = (("session_id", "vance.session_id"), ("process_id", "vance.process_id"))


def enabled() -> bool:
    return bool(_state["on"])


def setup_tracing(config: ObservabilityConfig, service: str) -> None:
    if not (config.otlp_endpoint or config.trace_dir):
        return
    from opentelemetry import trace
    from opentelemetry.instrumentation.pymongo import PymongoInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    if config.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(config.otlp_endpoint)))
    if config.trace_dir:
        # One JSON span per line, written as each span ends; a file per process, so lines of
        # several processes never interleave.
        path = Path(config.trace_dir) / f"{service}-{os.getpid()}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        out = open(path, "a", buffering=1)  # lives as long as the process
        exporter = ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    PymongoInstrumentor().instrument()
    _state["on"] = True


def server_interceptors() -> Sequence[Any]:
    if not _state["on"]:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor()]  # type: ignore[no-untyped-call]


def client_interceptors() -> Sequence[Any]:
    if not _state["on"]:
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return list(aio_client_interceptors())  # type: ignore[no-untyped-call]


def instrument_app(app: Any) -> None:
    """The gateway's FastAPI app: a server span per HTTP request and WebSocket."""
    if not _state["on"]:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(
        app, excluded_urls="healthz,metrics", server_request_hook=_redact_tokens
    )


_TOKEN_PARAM = re.compile(r"(token=)[^&\s]*")


def _redact_tokens(span: Any, scope: Any) -> None:
    """A WebSocket may carry its bearer token in the query string; the request span's URL
    attributes would keep it. Tokens stay out of traces as they stay out of logs."""
    if b"token=" not in scope.get("query_string", b""):
        return
    for key, value in dict(getattr(span, "attributes", None) or {}).items():
        if isinstance(value, str) and "token=" in value:
            span.set_attribute(key, _TOKEN_PARAM.sub(r"\1REDACTED", value))


def annotate(request: Any) -> None:
    """The session and process ids a request names, on the current (server) span."""
    if not _state["on"] or request is None:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    target = getattr(request, "target", None)
    for source in (request, target):
        if source is None:
            continue
        for field, attribute in _ATTRIBUTES:
            value = getattr(source, field, "")
            if value and isinstance(value, str):
                span.set_attribute(attribute, value)


def carrier() -> dict[str, str]:
    """The current trace context as W3C headers, to carry across a message."""
    from opentelemetry.propagate import inject

    headers: dict[str, str] = {}
    inject(headers)
    return headers


@contextlib.contextmanager
def turn_span(carried: Any, *, session_id: str, process_id: str, turn_id: str) -> Iterator[None]:
    """A worker's turn, as a child of the request that caused it."""
    if not _state["on"]:
        yield
        return
    from opentelemetry import trace
    from opentelemetry.propagate import extract

    attributes = {
        "vance.session_id": session_id,
        "vance.process_id": process_id,
        "vance.turn_id": turn_id,
    }
    with trace.get_tracer("vance").start_as_current_span(
        "turn", context=extract(dict(carried)), attributes=attributes
    ):
        yield


@contextlib.contextmanager
def frame_span(frame_type: str, session_id: str) -> Iterator[None]:
    """One client frame on the gateway's socket: a trace of its own (a socket lives for
    hours), linked to the socket's span. The log lines it causes name its session."""
    if session_id:
        logcontext.session_id.set(session_id)
    if not _state["on"]:
        yield
        return
    from opentelemetry import context, trace

    socket_span = trace.get_current_span().get_span_context()
    links = [trace.Link(socket_span)] if socket_span.is_valid else []
    attributes = {"vance.frame": frame_type}
    if session_id:
        attributes["vance.session_id"] = session_id
    with trace.get_tracer("vance").start_as_current_span(
        f"frame {frame_type}", context=context.Context(), links=links, attributes=attributes
    ):
        yield


@contextlib.contextmanager
def model_span(model: str, tier: str) -> Iterator[None]:
    if not _state["on"]:
        yield
        return
    from opentelemetry import trace

    with trace.get_tracer("vance").start_as_current_span(
        "model call", attributes={"vance.model": model, "vance.tier": tier}
    ):
        yield
