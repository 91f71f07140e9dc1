"""`vance chat --workspace`: the terminal's half of client tools (docs/clients.md): registering
the hosted tools after each bind, running an invoked one beside the event stream, asking the
user before writes and commands, and answering every invoke with a `client-tool-result`."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from vance_client.errors import VanceError
from vance_client.frames import ClientToolInvoke
from vance_client.requests import ClientToolRegister, ClientToolResult
from vance_client.tools.host import ToolHost

if TYPE_CHECKING:
    from vance_client.terminal.app import Chat


class ToolCalls:
    def __init__(self, chat: Chat, host: ToolHost | None) -> None:
        self.chat = chat
        self.host = host
        if host is not None:
            host.confirm = self.confirm
        self.calls: asyncio.TaskGroup | None = None  # the chat's: calls run beside the events
        self._question: asyncio.Future[bool] | None = None
        self._asking = asyncio.Lock()  # one question at a time

    async def register(self) -> None:
        """After every bind: the tools this client hosts (`client-tool-register`)."""
        if self.host is None or not self.chat.client.session_id:
            return
        try:
            await self.chat.client.request(ClientToolRegister(**self.host.register_data()))
        except VanceError as exc:
            self.chat.note(f"! client tools not registered: {exc.reason}: {exc.message}", "red")
            return
        self.chat.note(f"client tools ready in {self.host.workspace.root}", "green")

    def answer(self, line: str) -> bool:
        """The user's line answers a waiting question (y/yes allows); False: none waits."""
        if self._question is None or self._question.done():
            return False
        self._question.set_result(line.strip().lower() in ("y", "yes"))
        return True

    async def confirm(self, what: str) -> bool:
        async with self._asking:
            self._question = asyncio.get_running_loop().create_future()
            self.chat.note(f"? the agent wants to {what}. Allow? [y/N]", "bold yellow")
            self.chat.refresh()
            try:
                return await self._question
            finally:
                self._question = None

    async def invoked(self, frame: ClientToolInvoke) -> None:
        if self.host is None:  # nothing registered, so not expected: answer rather than hang
            await self._send(
                ClientToolResult(
                    call_id=frame.data.call_id,
                    status="ERROR",
                    error="this client hosts no tools (start it with --workspace)",
                ),
                frame.data.name,
            )
        elif self.calls is not None:
            self.calls.create_task(self._run(frame))

    async def _run(self, frame: ClientToolInvoke) -> None:
        assert self.host is not None
        d = frame.data
        self.chat.note(f"⚙ {d.name} {json.dumps(d.params)[:120]}")
        result = ClientToolResult(call_id=d.call_id, **await self.host.invoke(d.name, d.params))
        if result.status != "SUCCESS":
            self.chat.note(f"⚙ {d.name}: {result.error}", "red")
        await self._send(result, d.name)

    async def _send(self, result: ClientToolResult, name: str) -> None:
        try:
            await self.chat.client.send(result)
        except VanceError as exc:  # the server ends the call (TIMEOUT/UNAVAILABLE) on its side
            self.chat.note(f"! the result of {name} was not delivered: {exc.reason}", "red")
