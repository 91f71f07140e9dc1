"""The gRPC stubs the gateway calls."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.event_feed import EventFeed
from gateway.steer_stream import SteerStreams
from gateway.ws_transport import write_queued
from vance.channels import Channels
from vance.internal.v1 import process_internal_pb2_grpc, session_internal_pb2_grpc
from vance.observability import tracing
from vance.v1 import (
    knowledge_pb2_grpc,
    process_pb2_grpc,
    recipe_pb2_grpc,
    session_pb2_grpc,
    work_pb2_grpc,
)


@dataclass(frozen=True)
class Clients:
    sessions: session_pb2_grpc.SessionServiceAsyncStub
    # Password checks, bind lease renewal and replica leases: service-only (vance.internal.v1).
    sessions_internal: session_internal_pb2_grpc.SessionInternalServiceAsyncStub
    processes: process_pb2_grpc.ProcessServiceAsyncStub
    recipes: recipe_pb2_grpc.RecipeServiceAsyncStub
    work: work_pb2_grpc.UserWorkServiceAsyncStub  # hosted by process_service
    knowledge: knowledge_pb2_grpc.KnowledgeServiceAsyncStub  # hosted by process_service
    # One stub per process_service replica when there are several: a socket follows its
    # session's events on each (gateway/session_events.py). Empty with one replica.
    process_replicas: list[process_pb2_grpc.ProcessServiceAsyncStub] = field(default_factory=list)
    event_gap_fill_s: float = 0.1
    # The deadline of the calls that work through much data (a session's deletion, a RAG
    # document's embedding); every other call has the channel's (`calls.timeout_s`).
    batch_timeout_s: float = 120.0
    # With one replica: every socket's events on one stream (gateway/event_feed.py).
    event_feed: EventFeed | None = None
    # Steers on one stream per replica (gateway/steer_stream.py); None: unary calls (tracing on).
    steers: SteerStreams | None = None

    @classmethod
    def from_channels(cls, channels: Channels) -> Clients:
        replicas = channels.replicas("process_service")
        return cls(
            sessions=session_pb2_grpc.SessionServiceStub(channels.get("session_service")),
            sessions_internal=session_internal_pb2_grpc.SessionInternalServiceStub(
                channels.get("session_service")
            ),
            processes=process_pb2_grpc.ProcessServiceStub(channels.get("process_service")),
            recipes=recipe_pb2_grpc.RecipeServiceStub(channels.get("recipe_service")),
            work=work_pb2_grpc.UserWorkServiceStub(channels.get("process_service")),
            process_replicas=(
                [process_pb2_grpc.ProcessServiceStub(c) for c in replicas]
                if len(replicas) > 1
                else []
            ),
            event_gap_fill_s=channels.config.events.gap_fill_ms / 1000,
            batch_timeout_s=channels.config.calls.batch_timeout_s,
            knowledge=knowledge_pb2_grpc.KnowledgeServiceStub(channels.get("process_service")),
            steers=(
                None
                if tracing.enabled()
                else SteerStreams(
                    [process_internal_pb2_grpc.ProcessInternalServiceStub(c) for c in replicas],
                    timeout_s=channels.config.calls.timeout_s,
                )
            ),
            event_feed=(
                None
                if len(replicas) > 1
                else EventFeed(
                    process_internal_pb2_grpc.ProcessInternalServiceStub(
                        channels.get("process_service")
                    ),
                    handed_out=write_queued,
                )
            ),
        )
