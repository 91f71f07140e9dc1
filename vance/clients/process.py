"""process_service as its peers see it: processes, chat and the session cascades."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from vance import convert as vc
from vance.clients._rpc import call
from vance.config import CallsConfig
from vance.domain import ChatMessage, CloseReason, SuspendCause, ThinkProcess
from vance.errors import from_rpc_error
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.protoutil import dict_to_struct
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc


@dataclass(frozen=True)
class ProcessSpec:
    """What a new process is made of (CreateProcess, RespawnChat)."""

    tenant_id: str
    project_id: str
    session_id: str
    name: str
    engine: str
    title: str = ""
    recipe_name: str = ""
    recipe_snapshot: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    owner_user_id: str = ""
    idempotency_key: str = ""
    start: bool = False

    def to_proto(self) -> pipb.CreateProcessRequest:
        return pipb.CreateProcessRequest(
            tenant_id=self.tenant_id,
            project_id=self.project_id,
            session_id=self.session_id,
            name=self.name,
            title=self.title,
            engine=self.engine,
            recipe_name=self.recipe_name,
            recipe_snapshot=dict_to_struct(self.recipe_snapshot),
            params=dict_to_struct(self.params),
            owner_user_id=self.owner_user_id,
            idempotency_key=self.idempotency_key,
            start=self.start,
        )


@dataclass(frozen=True)
class ChatFeedPage:
    """One page of the chat feed (process_service/events/chat_feed.py): resume after `position`."""

    position: int
    messages: list[ChatMessage]


class Processes(Protocol):
    """What session_service needs of process_service."""

    async def engines(
        self, session_id: str, *, include_terminated: bool = False
    ) -> list[ThinkProcess]: ...

    async def process(self, process_id: str) -> ThinkProcess: ...

    async def engine_states(self, session_ids: list[str]) -> dict[str, list[tuple[str, int]]]:
        """Session -> (status, pending count) of each of its processes, CLOSED ones included."""
        ...

    async def chat(
        self, session_id: str, process_id: str, *, limit: int = 0
    ) -> list[ChatMessage]: ...

    async def create(self, spec: ProcessSpec) -> ThinkProcess: ...

    async def respawn_chat(self, spec: ProcessSpec, *, history_from: str) -> ThinkProcess: ...

    async def suspend_session(self, session_id: str, cause: SuspendCause) -> None: ...

    async def resume_session(self, session_id: str) -> None: ...

    async def close_session(self, session_id: str, reason: CloseReason) -> None: ...

    async def delete_session_data(self, session_id: str) -> None: ...

    async def engines_of(
        self, session_ids: list[str], *, include_terminated: bool = False
    ) -> dict[str, list[ThinkProcess]]:
        """`engines` of many sessions in one call, keyed by session id (each asked one)."""
        ...

    async def suspend_sessions(self, session_ids: list[str], cause: SuspendCause) -> list[str]:
        """`suspend_session` of many sessions in one call; the ids whose cascade failed."""
        ...

    async def close_sessions(self, session_ids: list[str], reason: CloseReason) -> list[str]:
        """`close_session` of many sessions in one call; the ids whose cascade failed."""
        ...

    def chat_feed(self, after: int) -> AsyncIterator[ChatFeedPage]: ...

    async def ack_chat_feed(self, through: int) -> None: ...


# The deadline of the calls that work through many sessions or a whole session's data (a
# sweep's batch of up to 10,000 sessions, a session's deletion): longer than the channel's
# default (`calls.timeout_s`, vance/authclient.py), which every other call here keeps.
BATCH_TIMEOUT_S = CallsConfig().batch_timeout_s


class ProcessClient:
    """`Processes` over gRPC."""

    def __init__(
        self, channel: grpc.aio.Channel, *, batch_timeout_s: float = BATCH_TIMEOUT_S
    ) -> None:
        self._batch_s = batch_timeout_s
        self.stub: process_pb2_grpc.ProcessServiceAsyncStub = process_pb2_grpc.ProcessServiceStub(
            channel
        )
        # Creation, the lifecycle cascades and the chat feed are service-only (vance.internal.v1).
        self.internal: process_internal_pb2_grpc.ProcessInternalServiceAsyncStub = (
            process_internal_pb2_grpc.ProcessInternalServiceStub(channel)
        )

    async def engines(
        self, session_id: str, *, include_terminated: bool = False
    ) -> list[ThinkProcess]:
        resp = await call(
            self.stub.ListProcesses(
                ppb.ListProcessesRequest(
                    session_id=session_id, include_terminated=include_terminated
                )
            )
        )
        return [vc.process_from_proto(p) for p in resp.processes]

    async def engine_states(self, session_ids: list[str]) -> dict[str, list[tuple[str, int]]]:
        resp = await call(
            self.internal.ListSessionEngines(
                pipb.ListSessionEnginesRequest(session_ids=session_ids)
            )
        )
        out: dict[str, list[tuple[str, int]]] = {}
        for s in resp.sessions:
            states = []
            for e in s.engines:
                status = vc.status_from_proto(e.status)
                states.append((status.value if status else "", int(e.pending_count)))
            out[s.session_id] = states
        return out

    async def process(self, process_id: str) -> ThinkProcess:
        got = await call(self.stub.GetProcess(ppb.GetProcessRequest(process_id=process_id)))
        return vc.process_from_proto(got)

    async def chat(self, session_id: str, process_id: str, *, limit: int = 0) -> list[ChatMessage]:
        resp = await call(
            self.stub.ListChatMessages(
                ppb.ListChatMessagesRequest(
                    session_id=session_id, process_id=process_id, limit=limit
                )
            )
        )
        return [vc.chat_from_proto(m) for m in resp.messages]

    async def create(self, spec: ProcessSpec) -> ThinkProcess:
        return vc.process_from_proto(await call(self.internal.CreateProcess(spec.to_proto())))

    async def respawn_chat(self, spec: ProcessSpec, *, history_from: str) -> ThinkProcess:
        req = pipb.RespawnChatRequest(process=spec.to_proto(), history_from_process_id=history_from)
        return vc.process_from_proto(await call(self.internal.RespawnChat(req)))

    async def suspend_session(self, session_id: str, cause: SuspendCause) -> None:
        await call(
            self.internal.SuspendProcesses(
                pipb.SessionCascadeRequest(
                    session_id=session_id, suspend_cause=f"SUSPEND_CAUSE_{cause.value}"
                )
            )
        )

    async def resume_session(self, session_id: str) -> None:
        await call(self.internal.ResumeProcesses(pipb.SessionCascadeRequest(session_id=session_id)))

    async def close_session(self, session_id: str, reason: CloseReason) -> None:
        await call(
            self.internal.CloseProcesses(
                pipb.SessionCascadeRequest(
                    session_id=session_id, close_reason=f"CLOSE_REASON_{reason.value}"
                )
            )
        )

    async def delete_session_data(self, session_id: str) -> None:
        await call(
            self.internal.DeleteSessionData(
                pipb.SessionCascadeRequest(session_id=session_id), timeout=self._batch_s
            )
        )

    async def engines_of(
        self, session_ids: list[str], *, include_terminated: bool = False
    ) -> dict[str, list[ThinkProcess]]:
        if not session_ids:
            return {}
        resp = await call(
            self.internal.ListSessionsProcesses(
                pipb.ListSessionsProcessesRequest(
                    session_ids=session_ids, include_terminated=include_terminated
                ),
                timeout=self._batch_s,
            )
        )
        out: dict[str, list[ThinkProcess]] = {sid: [] for sid in session_ids}
        for sid, listed in resp.sessions.items():
            out[sid] = [vc.process_from_proto(p) for p in listed.processes]
        return out

    async def suspend_sessions(self, session_ids: list[str], cause: SuspendCause) -> list[str]:
        if not session_ids:
            return []
        return await _failed(
            self.internal.SuspendSessions(
                pipb.SessionsCascadeRequest(
                    session_ids=session_ids, suspend_cause=f"SUSPEND_CAUSE_{cause.value}"
                ),
                timeout=self._batch_s,
            )
        )

    async def close_sessions(self, session_ids: list[str], reason: CloseReason) -> list[str]:
        if not session_ids:
            return []
        return await _failed(
            self.internal.CloseSessions(
                pipb.SessionsCascadeRequest(
                    session_ids=session_ids, close_reason=f"CLOSE_REASON_{reason.value}"
                ),
                timeout=self._batch_s,
            )
        )

    async def chat_feed(self, after: int) -> AsyncIterator[ChatFeedPage]:
        """The chat feed after `after`, then live pages, until the caller stops reading. A
        stream: no deadline (it lasts as long as the indexer reads it)."""
        stream = self.internal.StreamChatFeed(pipb.ChatFeedRequest(after=after))
        try:
            async for page in stream:
                yield ChatFeedPage(
                    position=page.position,
                    messages=[vc.chat_from_proto(m) for m in page.messages],
                )
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from exc
        finally:
            stream.cancel()

    async def ack_chat_feed(self, through: int) -> None:
        """Every page up to `through` is indexed: process_service may delete them."""
        await call(self.internal.AckChatFeed(pipb.ChatFeedRequest(after=through)))


async def _failed(cascade: Awaitable[pipb.SessionsCascadeResponse]) -> list[str]:
    """The sessions whose batched cascade failed (the caller leaves them to a later round)."""
    resp = await call(cascade)
    return list(resp.failed_session_ids)
