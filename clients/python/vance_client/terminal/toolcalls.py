"""`vance chat --workspace`: the terminal's half of client tools (docs/clients.md "Client
tools"): registering the hosted tools after each bind and reconnect, running an invoked one
beside the event stream, asking the user before writes and commands, and answering every invoke
with a `client-tool-result`. The server's half is gateway/client_tools.py."""

from __future__ import annotations

import asyncio
import json
from contextvars import ContextVar
from typing import TYPE_CHECKING

from vance_client.errors import VanceError
from vance_client.frames import ClientToolInvoke
from vance_client.requests import ClientToolResult
from vance_client.tools.host import ToolHost

if TYPE_CHECKING:
    from vance_client.terminal.app import Chat

# When the server stops waiting for the call this task runs (its `timeoutMs`, on the event
# loop's clock): a question still open then is withdrawn, so a late "y" writes nothing the
# model was already told timed out. A ContextVar because each call runs in its own task and
# the question is asked from inside ToolHost.invoke.
_deadline: ContextVar[float | None] = ContextVar("deadline", default=None)
# Which socket the call came on (ToolCalls.link, counted up at each drop): the server ends a
# call whose socket drops (UNAVAILABLE), so its question is withdrawn too.
_link: ContextVar[int] = ContextVar("link", default=0)


class ToolCalls:
    def __init__(self, chat: Chat, host: ToolHost | None) -> None:
        self.chat = chat
        self.host = host
        if host is not None:
            host.confirm = self.confirm
        self.calls: asyncio.TaskGroup | None = None  # the chat's: calls run beside the events
        self._question: asyncio.Future[bool] | None = None
        self._asking = asyncio.Lock()  # one question at a time
        self.link = 0  # counted up when the socket drops

    async def register(self) -> None:
        """After every bind and reconnect (the server drops a socket's tools when it leaves
        its session): the tools this client hosts (`client-tool-register`). A refusal (a
        profile without client tools, a gateway that cannot host them) is shown, and the chat
        goes on without them."""
        if self.host is None or not self.chat.client.session_id:
            return
        try:
            done = await self.chat.client.register_tools(self.host.declarations())
        except VanceError as exc:
            self.chat.note(f"! client tools not registered: {exc.reason}: {exc.message}", "red")
            return
        except TimeoutError:
            self.chat.note("! client tools not registered: the gateway did not answer", "red")
            return
        self.chat.note(
            f"client tools ready in {self.host.workspace.root} ({done.registered} tools)", "green"
        )

    def answer(self, line: str) -> bool:
        """The user's line answers a waiting question (y/yes allows); False: none waits."""
        if self._question is None or self._question.done():
            return False
        self._question.set_result(line.strip().lower() in ("y", "yes"))
        return True

    def dropped(self) -> None:
        """The socket dropped: the server has ended its calls, so their questions are moot."""
        self.link += 1
        if self._question is not None and not self._question.done():
            self.chat.note("(the connection dropped: the question is withdrawn)", "yellow")
            self._question.set_result(False)

    async def confirm(self, what: str) -> bool:
        deadline = _deadline.get()
        try:
            async with asyncio.timeout_at(deadline), self._asking:
                if _link.get() != self.link:
                    return False  # its socket dropped while another question was open
                self._question = asyncio.get_running_loop().create_future()
                self.chat.note(f"? the agent wants to {what}. Allow? [y/N]", "bold yellow")
                self.chat.refresh()
                try:
                    return await self._question
                finally:
                    self._question = None
        except TimeoutError:
            self.chat.note(f"(no answer in time: the request to {what} timed out)", "yellow")
            return False

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
        _link.set(self.link)
        if d.timeout_ms:
            # A little before the server's own deadline, so a declined question's ERROR still
            # reaches it rather than arriving after its TIMEOUT.
            loop = asyncio.get_running_loop()
            _deadline.set(loop.time() + max(0.0, d.timeout_ms / 1000 - 1.0))
        self.chat.note(f"⚙ {d.name} {json.dumps(d.params)[:120]}")
        result = ClientToolResult(call_id=d.call_id, **await self.host.invoke(d.name, d.params))
        if result.status != "SUCCESS":
            self.chat.note(f"⚙ {d.name}: {result.error}", "red")
        await self._send(result, d.name)

    async def _send(self, result: ClientToolResult, name: str) -> None:
        try:
            await self.chat.client.tool_result(result)
        except VanceError as exc:  # the server ended the call (TIMEOUT/UNAVAILABLE) on its side
            self.chat.note(f"! the result of {name} was not taken: {exc.reason}", "red")
        except TimeoutError:
            self.chat.note(f"! the result of {name} was not delivered: no connection", "red")
