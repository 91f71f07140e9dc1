"""OpenTelemetry traces: off unless an OTLP endpoint or a trace file is configured. Then every
gRPC call (client and server), the gateway's HTTP and WebSocket requests, store commands, turns
and model calls are spans, one trace per user request across the processes, with the session,
process and turn ids as attributes. Off, every hook here is a flag test."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vance.config import ObservabilityConfig
from vance.observability import logcontext

_state: dict[str, Any] = {"on": False}
_ATTRIBUTES = (("session_id", "vance.session_id"), ("process_id", "vance.process_id"))


def enabled() -> bool:
    return bool(_state["on"])


def wanted_exporters(config: ObservabilityConfig, environ: Mapping[str, str]) -> list[str]:
    """Which span exporters to run: `OTEL_TRACES_EXPORTER` (otlp, console, none) when set, else
    OTLP when an endpoint is configured (`observability.otlp_endpoint` or the standard
    `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`). Unlike the SDK's default (OTLP to localhost), no
    endpoint means no export: a laptop without a collector would log failed exports forever.
    `OTEL_SDK_DISABLED=true` turns tracing off whatever else is set."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if named:
        return [n.strip() for n in named.split(",") if n.strip() not in ("", "none")]
    endpoint = (
        config.otlp_endpoint
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    return ["otlp"] if endpoint else []


def setup_tracing(config: ObservabilityConfig, service: str, environ: Mapping[str, str]) -> None:
    """Tracing as configured and as the standard `OTEL_*` variables say: the SDK itself reads
    the endpoint, headers, timeout and compression of the OTLP exporter, the sampler
    (`OTEL_TRACES_SAMPLER[_ARG]`), the batch processor (`OTEL_BSP_*`), the resource
    (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`) and the propagators (`OTEL_PROPAGATORS`);
    docs/operations.md, "Traces"."""
    exporters = wanted_exporters(config, environ)
    if not (exporters or config.trace_dir):
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

    # OTEL_SERVICE_NAME, when set, names the service (Resource.create reads it); else ours.
    attributes = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": service}
    provider = TracerProvider(resource=Resource.create({**attributes, "vance.service": service}))
    if "otlp" in exporters:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(config.otlp_endpoint or None)
        provider.add_span_processor(BatchSpanProcessor(exporter))
    if "console" in exporters:
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    if config.trace_dir:
        # One JSON span per line, written as each span ends; a file per process, so lines of
        # several processes never interleave.
        path = Path(config.trace_dir) / f"{service}-{os.getpid()}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        out = open(path, "a", buffering=1)  # lives as long as the process
        file_exporter = ConsoleSpanExporter(
            out=out, formatter=lambda s: s.to_json(indent=None) + "\n"
        )
        provider.add_span_processor(SimpleSpanProcessor(file_exporter))
    trace.set_tracer_provider(provider)
    PymongoInstrumentor().instrument()
    logcontext.span_ids = _span_ids
    _state["on"] = True


def _span_ids() -> tuple[str, str] | None:
    """The current trace and span ids, hex as in W3C traceparent, for log lines."""
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


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
