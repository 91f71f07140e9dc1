"""`ctx.processes`: the processes of the engine's session, to list, read and steer. What the
process tools give a model (process_list, process_status, process_steer), for an engine's own
code: through process_service's RPCs, like every other write of an engine."""

from __future__ import annotations

from dataclasses import dataclass

from vance import convert as c
from vance.domain import (
    ChatMessage,
    ChatRole,
    DeliveryOutcome,
    ProcessStatus,
    ThinkProcess,
    UserChatInput,
)
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc


@dataclass(frozen=True)
class Sibling:
    """A process of the session as another engine sees it: its document (status, goal, close
    reason and detail, rolling chat summary) and its newest chat messages."""

    process: ThinkProcess
    recent_chat: list[ChatMessage]

    @property
    def status(self) -> ProcessStatus:
        return self.process.status

    @property
    def goal(self) -> str:
        return self.process.goal

    @property
    def last_reply(self) -> str:
        """Its newest assistant message: what it said last (a question, a result)."""
        for m in reversed(self.recent_chat):
            if m.role is ChatRole.ASSISTANT:
                return m.content
        return ""


@dataclass(frozen=True)
class Steered:
    outcome: DeliveryOutcome
    reason: str = ""  # why, when REJECTED


class SiblingError(ValueError):
    pass


class ProcessOrchestrator:
    """Sibling processes of the same session. Steers carry idempotency keys from the turn and
    their place in it, so a redone turn delivers each once."""

    def __init__(
        self,
        process: ThinkProcess,
        stub: process_pb2_grpc.ProcessServiceAsyncStub,
        turn_id: str = "",
    ) -> None:
        self._process = process
        self._stub = stub
        self._turn_id = turn_id
        self._steers = 0

    async def list(self, *, include_terminated: bool = False) -> list[ThinkProcess]:
        resp = await self._stub.ListProcesses(
            ppb.ListProcessesRequest(
                session_id=self._process.session_id, include_terminated=include_terminated
            )
        )
        return [c.process_from_proto(p) for p in resp.processes]

    async def get(self, name: str, *, chat_limit: int = 5) -> Sibling:
        """A sibling by name (closed ones too), with its newest `chat_limit` chat messages."""
        found = next((p for p in await self.list(include_terminated=True) if p.name == name), None)
        if found is None:
            raise SiblingError(f"no process named {name!r} in this session")
        chat: list[ChatMessage] = []
        if chat_limit > 0:
            resp = await self._stub.ListChatMessages(
                ppb.ListChatMessagesRequest(
                    session_id=self._process.session_id, process_id=found.id, limit=chat_limit
                )
            )
            chat = [c.chat_from_proto(m) for m in resp.messages]
        return Sibling(found, chat)

    async def steer(self, name: str, content: str) -> Steered:
        """Sends a sibling a message, as the process_steer tool does; the inbox decides
        (a CLOSED target is REJECTED with a reason)."""
        if name == self._process.name:
            raise SiblingError("a process cannot steer itself")
        self._steers += 1
        message = UserChatInput(
            content=content,
            idempotency_key=f"{self._turn_id}:steer{self._steers}",
            sender_process_id=self._process.id,
            from_user=f"process:{self._process.name}",
        )
        resp = await self._stub.Steer(
            ppb.SteerRequest(
                target=ppb.ProcessRef(session_id=self._process.session_id, process_name=name),
                message=c.steer_to_proto(message),
            )
        )
        return Steered(c.outcome_from_proto(resp.outcome), resp.reason)
