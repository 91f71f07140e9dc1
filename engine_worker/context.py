"""ThinkEngineContext: the only surface an engine acts through. Built fresh for every call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine_worker.json_types import JsonObject
from engine_worker.memory import MemoryApi, MemoryEntry
from engine_worker.reports import EventPublisher
from engine_worker.settings import EngineSettingsApi, SettingsCache
from engine_worker.siblings import ProcessOrchestrator
from engine_worker.tools import ToolDispatcher
from vance import convert as c
from vance.chat_ids import chat_message_id, turn_message_id
from vance.domain import ChatMessage, ChatRole, SteerMessage, ThinkProcess
from vance.internal.v1 import (
    knowledge_internal_pb2_grpc,
    session_internal_pb2_grpc,
    worker_pb2_grpc,
)
from vance.llm import ModelClient
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc


@dataclass(frozen=True)
class Scope:
    """Tenant -> group -> project -> session -> process (seed 000 §2.2)."""

    tenant_id: str
    project_id: str
    session_id: str
    process_id: str
    group: str = ""  # the project's group, "" for none (engine_worker/project_groups.py)


class ChatApi:
    """Reads and writes the chat of this process. Appends carry ids derived from the turn, so a
    redone turn writes each message once."""

    def __init__(
        self,
        turn_id: str,
        process: ThinkProcess,
        stub: process_pb2_grpc.ProcessServiceAsyncStub,
        events: EventPublisher,
        committed: int = 0,
        recent: list[ChatMessage] | None = None,
        on_read: Callable[[list[ChatMessage]], None] | None = None,
    ) -> None:
        self._turn_id = turn_id
        self._on_read = on_read  # told what a ListChatMessages read brought (chat_held.py)
        self._process = process
        self._stub = stub
        self._events = events
        self._ordinal = 0
        self._committed = committed  # chat messages committed before this turn
        self._appended: list[ChatMessage] = []  # this turn's, in order
        # The last committed messages, numbered committed-len+1..committed, that came with the
        # assignment or that this worker holds (empty when neither had them).
        self._recent = recent or []

    async def append(self, role: ChatRole, content: str, meta: JsonObject | None = None) -> str:
        self._ordinal += 1
        message_id = turn_message_id(self._turn_id, self._ordinal)
        self._appended.append(
            ChatMessage(
                id=chat_message_id(self._process.id, self._committed + self._ordinal),
                session_id=self._process.session_id,
                think_process_id=self._process.id,
                process_name=self._process.name,
                role=role,
                content=content,
                meta=meta or {},
            )
        )
        self._events.append(message_id, role, content, meta)
        return message_id

    async def history(self, limit: int = 0) -> list[ChatMessage]:
        """The chat of this process, oldest first: what was committed before this turn, then
        what this turn appended so far (known here, so no read races the appends in flight)."""
        out: list[ChatMessage] = []
        if self._committed > 0 and (limit <= 0 or len(self._appended) < limit):
            # The committed messages numbered `first`..committed, as ListChatMessages reads them.
            first = max(1, self._committed - limit + len(self._appended) + 1) if limit > 0 else 1
            covered_from = self._committed - len(self._recent) + 1
            if self._recent and first >= covered_from:
                out = self._recent[first - covered_from :]
            else:
                out = await self._read(limit)
        out += self._appended
        return out[-limit:] if limit > 0 else out

    async def _read(self, limit: int) -> list[ChatMessage]:
        resp = await self._stub.ListChatMessages(
            ppb.ListChatMessagesRequest(
                process_id=self._process.id,
                limit=max(0, limit - len(self._appended)) if limit > 0 else 0,
                through=self._committed,
            )
        )
        out = [c.chat_from_proto(m) for m in resp.messages]
        if self._on_read is not None:
            self._on_read(out)  # the last committed messages, through self._committed
        return out


class ThinkEngineContext:
    def __init__(
        self,
        *,
        turn_id: str,
        process: ThinkProcess,
        pending: list[SteerMessage],
        chat_count: int = 0,
        recent_chat: list[ChatMessage] | None = None,
        on_chat_read: Callable[[list[ChatMessage]], None] | None = None,
        llm: ModelClient,
        events: EventPublisher,
        stub: process_pb2_grpc.ProcessServiceAsyncStub,
        worker: worker_pb2_grpc.WorkerServiceAsyncStub,
        tools: ToolDispatcher,
        sessions: session_internal_pb2_grpc.SessionInternalServiceAsyncStub | None = None,
        project_memory: list[MemoryEntry] | None = None,
        settings_cache: SettingsCache | None = None,
        default_settings: dict[str, str] | None = None,
        knowledge: knowledge_internal_pb2_grpc.KnowledgeInternalServiceAsyncStub | None = None,
        group: str = "",
    ) -> None:
        self.turn_id = turn_id
        self.scope = Scope(
            process.tenant_id, process.project_id, process.session_id, process.id, group
        )
        self.user = process.owner_user_id
        self.llm = llm
        self.events = events
        self.chat = ChatApi(
            turn_id, process, stub, self.events, chat_count, recent_chat, on_chat_read
        )
        self.processes = ProcessOrchestrator(process, stub, turn_id)
        self.tools = tools
        # Recipe parameters copied into the process at spawn, as the engine's settings.
        self.settings: JsonObject = dict(process.params)
        self._pending = pending
        self._drained = False
        self._memory = MemoryApi(process, worker, turn_id, project_memory, knowledge)
        self._settings_api = EngineSettingsApi(
            process, sessions, default_settings, cache=settings_cache
        )
        self.process = process

    def settings_api(self) -> EngineSettingsApi:
        """Typed settings through process -> session -> project -> group -> tenant, then the
        engine's defaults (engine_worker/settings.py); `settings` holds the recipe's
        parameters."""
        return self._settings_api

    def memory(self) -> MemoryApi:
        """Records of this process and of its project (engine_worker/memory.py)."""
        return self._memory

    async def drain_pending(self) -> list[SteerMessage]:
        """The inbox messages this turn owns, oldest first. They count as drained only when the
        turn commits; messages that arrive meanwhile start the next turn."""
        if self._drained:
            return []
        self._drained = True
        return list(self._pending)
