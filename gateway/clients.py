"""The gRPC stubs the gateway calls."""

from __future__ import annotations

from dataclasses import dataclass

from vance.channels import Channels
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
    processes: process_pb2_grpc.ProcessServiceAsyncStub
    recipes: recipe_pb2_grpc.RecipeServiceAsyncStub
    work: work_pb2_grpc.UserWorkServiceAsyncStub  # hosted by process_service
    knowledge: knowledge_pb2_grpc.KnowledgeServiceAsyncStub  # hosted by process_service

    @classmethod
    def from_channels(cls, channels: Channels) -> Clients:
        return cls(
            sessions=session_pb2_grpc.SessionServiceStub(channels.get("session_service")),
            processes=process_pb2_grpc.ProcessServiceStub(channels.get("process_service")),
            recipes=recipe_pb2_grpc.RecipeServiceStub(channels.get("recipe_service")),
            work=work_pb2_grpc.UserWorkServiceStub(channels.get("process_service")),
            knowledge=knowledge_pb2_grpc.KnowledgeServiceStub(channels.get("process_service")),
        )
