"""`vance chat`: the terminal client on top of `VanceClient`.

prompt_toolkit owns the terminal (the input line with history, the ESC key binding, the status
line under it, and printing above the prompt while the user types); rich renders Markdown into
ANSI text that prompt_toolkit prints. Everything shown in the scrollback comes from the session's
event stream (the user's own lines too, as the server stores them), so a replay after a
reconnect or a switch shows the same conversation, and the SDK's seq tracking shows it once."""

from __future__ import annotations

import asyncio
import json
import shutil

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.shortcuts import print_formatted_text
from prompt_toolkit.styles import Style
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from vance_client.client import Link, VanceClient
from vance_client.errors import VanceError
from vance_client.frames import (
    ChatMessageAppended,
    ChatMessageStreamChunk,
    ClientToolInvoke,
    ErrorFrame,
    Frame,
    InboxItemAdded,
    PlanProposed,
    ProcessProgress,
    ProcessSpawned,
    SwitchTo,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownFrame,
)
from vance_client.models import ChatMessage
from vance_client.terminal import commands
from vance_client.terminal.followed import Followed
from vance_client.terminal.toolcalls import ToolCalls
from vance_client.terminal.view import View, render_ansi
from vance_client.tools.host import ToolHost
from vance_client.tools.workspace import ToolRefused

PROFILE = "foot"  # the terminal profile: can follow Eddie's switch-to (vance/profiles.py)
STYLE = Style.from_dict({"bottom-toolbar": "noreverse"})


def run_chat(
    *,
    url: str,
    tenant: str,
    token: str,
    project: str | None,
    session: str | None,
    workspace: str | None = None,
    allow: bool = False,
) -> int:
    try:
        tools = ToolHost(workspace, allow=allow) if workspace else None
    except (ToolRefused, OSError) as exc:
        print(f"vance: --workspace {workspace}: {exc}")
        return 2
    return asyncio.run(_main(url, tenant, token, project, session, tools))


async def _main(
    url: str,
    tenant: str,
    token: str,
    project: str | None,
    session: str | None,
    tools: ToolHost | None,
) -> int:
    try:
        async with VanceClient(url, tenant, token, profile=PROFILE) as client:
            return await Chat(client, tools).run(project=project, session=session)
    except VanceError as exc:
        print(f"vance: {exc.reason}: {exc.message}")
        return 1
    finally:
        if tools is not None:
            await tools.close()  # commands still running are killed with the client


class Chat:
    def __init__(self, client: VanceClient, tools: ToolHost | None = None) -> None:
        self.client = client
        self.tools = ToolCalls(self, tools)  # client tools: only with --workspace
        self.view = View(width=shutil.get_terminal_size((100, 40)).columns)
        self.hub_session: str | None = None
        self.engines: dict[str, str] = {}  # process id -> engine, to name who speaks
        self.options: list[str] = []  # labels of the open question, answered by number
        self.listed: list[str] = []  # session ids of the last /sessions or /search, by number
        self.actions: asyncio.Queue[str] = asyncio.Queue()  # key presses for the action task
        self.followed = Followed()
        self.prompt: PromptSession[str] | None = None
        self.heading = ""  # printed when the SDK says the new binding's events begin
        self.plan_from: str | None = None  # the process whose plan waits for /approve

    # --- output ---

    def show(self, renderable: object) -> None:
        # Measured each time: the user may resize the terminal while chatting.
        self.view.width = shutil.get_terminal_size((100, 40)).columns
        print_formatted_text(ANSI(render_ansi(renderable, self.view.width)), end="")

    def note(self, text: str, style: str = "dim") -> None:
        self.show(Text(text, style=style))

    def refresh(self) -> None:
        if self.prompt is not None and self.prompt.app.is_running:
            self.prompt.app.invalidate()

    # --- main loop ---

    async def run(self, *, project: str | None, session: str | None) -> int:
        keys = KeyBindings()

        @keys.add("escape", eager=True)
        def _pause(event: KeyPressEvent) -> None:
            self.actions.put_nowait("pause")

        self.prompt = PromptSession(
            bottom_toolbar=lambda: ANSI(self.view.toolbar()),
            key_bindings=keys,
            style=STYLE,
            erase_when_done=True,  # the line comes back from the server as the user's message
        )
        code = 0
        with patch_stdout(raw=True):
            async with asyncio.TaskGroup() as tg:
                self.tools.calls = tg
                events = tg.create_task(self._events())
                actions = tg.create_task(self._actions())
                try:
                    await self._open(project, session)
                    await self._input()
                except VanceError as exc:  # the session could not be opened
                    self.note(f"vance: {exc.reason}: {exc.message}", "red")
                    code = 1
                finally:
                    events.cancel()
                    actions.cancel()
                    self.tools.answer("no")  # a tool call waiting for a yes is declined
        return code

    async def _open(self, project: str | None, session: str | None) -> None:
        if session:
            await self.switch(session)
        elif project:
            await self.open_project(project)
        else:
            await self.open_hub()

    async def _input(self) -> None:
        assert self.prompt is not None
        while True:
            try:
                line = await self.prompt.prompt_async("> ")
            except KeyboardInterrupt:
                continue
            except EOFError:
                return
            line = line.strip()
            if self.tools.answer(line):
                continue  # it answered a tool call's question
            if not line:
                continue
            try:
                if line.startswith("/"):
                    if await commands.run(self, line) == "quit":
                        return
                else:
                    await self.say(line)
            except VanceError as exc:
                self.note(f"! {exc.reason}: {exc.message}", "red")

    async def _actions(self) -> None:
        while True:
            action = await self.actions.get()
            if action == "pause":
                await self.pause()
            elif action == "register":
                await self.tools.register()

    # --- what the user does ---

    async def say(self, line: str) -> None:
        if self.options and line.isdigit() and 1 <= int(line) <= len(self.options):
            line = self.options[int(line) - 1]  # a numbered choice answers with its label
        self.options = []
        reply = await self.client.steer(line)
        if reply.outcome == "REJECTED":
            self.note(f"! not sent: {reply.reason}", "red")
        elif reply.outcome == "DEFERRED":
            # Paused by ESC (or suspended): the message waits; resuming lets it run now.
            await self.client.resume()
            self.note("(resumed the paused chat)")
        elif reply.outcome == "QUEUED":
            self.note("(queued: it runs after the current turn)")

    async def pause(self) -> None:
        """ESC: the session-wide pause (seed 002 §12.1): running turns stop at their end."""
        try:
            paused = await self.client.pause_session()
        except VanceError as exc:
            self.note(f"! pause: {exc.reason}", "red")
            return
        names = ", ".join(p.process_name for p in paused)
        self.note(f"⏸ paused: {names}" if names else "⏸ nothing was running", "yellow")

    async def open_hub(self) -> None:
        if self.hub_session is not None:
            await self.switch(self.hub_session)
            return
        self.heading = "hub (eddie)"
        opened = await self.client.open_hub()
        self.hub_session = opened.session_id
        await self._bound(f"hub · {opened.session_id}")

    async def open_project(self, project: str) -> None:
        self.heading = f"project {project}"
        opened = await self.client.create_session(project)
        await self._bound(f"{project} · {opened.session_id}")

    async def switch(self, session_id: str) -> None:
        hub = session_id == self.hub_session
        self.heading = "hub (eddie)" if hub else f"session {session_id}"
        opened = await self.client.resume_session(session_id)
        where = "hub" if hub else opened.project_id
        await self._bound(f"{where} · {session_id}")

    async def _bound(self, where: str) -> None:
        self.options = []
        processes = await self.client.processes()
        self.engines.update({p.think_process_id: p.engine for p in processes})
        self.view.reset(where, processes)
        self.refresh()
        await self.tools.register()

    # --- what the server says ---

    async def _events(self) -> None:
        async for event in self.client.events():
            if isinstance(event, Link):
                self._link(event)
            else:
                await self._frame(event)
            self.refresh()
        # The link closed for good (logout elsewhere, a revoked token): leave the prompt.
        if self.prompt is not None and self.prompt.app.is_running:
            self.prompt.app.exit(exception=EOFError())

    def _link(self, link: Link) -> None:
        before = self.view.link
        if link.state in ("connected", "reconnecting", "closed"):
            self.view.link = link.state
        if link.state == "reconnecting" and before != "reconnecting":
            self.note(f"connection lost ({link.reason}); reconnecting…", "yellow")
            self.tools.dropped()
        elif link.state == "connected" and before == "reconnecting":
            self.note("reconnected", "green")
            self.actions.put_nowait("register")  # a new socket: the server forgot the tools
        elif link.state == "binding":
            self.show(Text(f"── {self.heading} ──", style="bold cyan"))
        elif link.state == "unbound":
            self.note(f"! the session could not be bound again: {link.reason}", "red")
        elif link.state == "closed":
            self.note(f"connection closed: {link.reason}", "red")

    async def _frame(self, frame: Frame) -> None:
        if isinstance(frame, ChatMessageAppended):
            self._message(frame.data)
        elif isinstance(frame, ChatMessageStreamChunk):
            d = frame.data
            self.view.streams[d.think_process_id] = (
                self.view.streams.get(d.think_process_id, "") + d.chunk
            )
        elif isinstance(frame, ProcessProgress):
            if frame.forwarded_by is None and frame.data.engine:
                self.engines[frame.data.process_id] = frame.data.engine
            self.view.progress(frame)
            if (
                frame.is_status_change
                and frame.forwarded_by is None
                and frame.data.status == "PAUSED"
            ):
                self.note(
                    f"⏸ {frame.data.process_name} is paused; your next message resumes it", "yellow"
                )
        elif isinstance(frame, ProcessSpawned):
            self.view.spawned(frame)
            self.engines[frame.data.child_process_id] = frame.data.engine
            sp = frame.data
            self.note(f"+ {sp.child_process_name} ({sp.engine}/{sp.recipe}): {sp.goal}")
        elif isinstance(frame, ToolCallStarted):
            self.note(f"· {frame.data.process_name}: {frame.data.tool_name}")
        elif isinstance(frame, ToolCallCompleted):
            if frame.data.status != "SUCCESS":
                self.note(
                    f"· {frame.data.tool_name} {frame.data.status}: {frame.data.error}", "red"
                )
        elif isinstance(frame, InboxItemAdded):
            self.view.unread += 1
            self.note(f"📥 inbox: {frame.data.title}  (/inbox)", "magenta")
        elif isinstance(frame, SwitchTo):
            await self._switch_to(frame)
        elif isinstance(frame, ErrorFrame):
            self.note(f"! {frame.data.reason}: {frame.data.error_message}", "red")
        elif isinstance(frame, ClientToolInvoke):
            await self.tools.invoked(frame)
        elif isinstance(frame, PlanProposed):
            self._plan(frame)
        elif isinstance(frame, UnknownFrame):
            self.note(f"[{frame.type}] {json.dumps(frame.data)[:200]}")

    def _message(self, m: ChatMessage) -> None:
        self.view.streams.pop(m.think_process_id, None)
        if m.role == "user":
            self.show(Text.from_markup(f"[bold green]you >[/] {escape(m.content)}"))
            return
        if m.role != "assistant":
            # A turn that failed for good says why in the chat, which stays open.
            self.note(m.content, "red" if m.meta.get("error") == "turn_failed" else "dim")
            return
        who = self.engines.get(m.think_process_id) or m.process_name
        if m.process_name != "chat":
            who = f"{m.process_name} ({who})" if who != m.process_name else who
        self.show(Text(f"{who} >", style="bold blue"))
        self.show(Markdown(m.content))
        info = m.meta.get("info")
        if isinstance(info, str) and info.strip():
            self.show(Panel(Markdown(info), border_style="dim"))
        if m.options and m.process_name == "chat":
            self.options = [o.label for o in m.options]
            self.note(f"(answer with a number, 1-{len(self.options)})", "cyan")

    def _plan(self, frame: PlanProposed) -> None:
        """A plan for the user to approve (the reference's `plan-proposed`; no engine here
        sends one yet): shown whole, answered with /approve or /reject."""
        d = frame.data
        self.plan_from = d.process_name or "chat"
        extra = d.model_extra or {}
        text = next(
            (extra[k] for k in ("plan", "markdown", "content") if isinstance(extra.get(k), str)),
            None,
        )
        self.show(Text(f"plan from {self.plan_from}:", style="bold yellow"))
        self.show(Markdown(text) if text else Text(json.dumps(extra, indent=2)))
        self.note("(/approve or /reject, with a note if you like)", "cyan")

    async def _switch_to(self, frame: SwitchTo) -> None:
        """Eddie hands the user to a worker's session; `/hub` comes back. A stored switch-to
        replays with its session, so each is followed once (remembered across runs)."""
        origin, seq = frame.session_id or "", frame.seq or 0
        if not self.followed.first_time(origin, seq):
            return
        d = frame.data
        if d.voice_announcement:
            self.note(d.voice_announcement, "bold")
        self.note(f"→ switching to {d.target_project_id} (/hub to come back)", "cyan")
        await self.switch(d.target_session_id)
