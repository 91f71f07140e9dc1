"""How process_service takes memory recall and RAG on (process_service/server.py)."""

from __future__ import annotations

import grpc
from pymongo.asynchronous.database import AsyncDatabase

from process_service.knowledge.base import Knowledge
from process_service.knowledge.embeddings import Embedder
from process_service.knowledge.memory_store import MemoryStore
from process_service.knowledge.rag_index import RagIndex
from process_service.knowledge.recall import MemoryRecall
from process_service.knowledge.service import KnowledgeServicer
from process_service.store.process_store import ProcessStore
from vance.clock import Clock
from vance.config import Config
from vance.internal.v1 import knowledge_internal_pb2, knowledge_internal_pb2_grpc
from vance.store import Document
from vance.v1 import knowledge_pb2, knowledge_pb2_grpc, session_pb2_grpc

KNOWLEDGE_SERVICE_NAME = knowledge_pb2.DESCRIPTOR.services_by_name["KnowledgeService"].full_name
KNOWLEDGE_INTERNAL_SERVICE_NAME = knowledge_internal_pb2.DESCRIPTOR.services_by_name[
    "KnowledgeInternalService"
].full_name


def knowledge(
    db: AsyncDatabase[Document],
    memory: MemoryStore,
    clock: Clock,
    config: Config,
    sessions: session_pb2_grpc.SessionServiceAsyncStub,
) -> tuple[Knowledge, Embedder]:
    embedder = Embedder(config.llm, sessions)
    return Knowledge(memory, MemoryRecall(memory, db), RagIndex(db, embedder, clock)), embedder


def serve_knowledge(
    k: Knowledge,
    store: ProcessStore,
    sessions: session_pb2_grpc.SessionServiceAsyncStub,
    server: grpc.aio.Server,
) -> None:
    servicer = KnowledgeServicer(k, store, sessions)
    knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(servicer, server)
    knowledge_internal_pb2_grpc.add_KnowledgeInternalServiceServicer_to_server(servicer, server)
