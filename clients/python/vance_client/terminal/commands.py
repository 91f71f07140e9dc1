"""The slash commands of `vance chat`; each talks to the gateway through the chat's client."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from vance_client.terminal.app import Chat

HELP = """\
/hub               back to the hub (Eddie)
/sessions          your sessions, numbered
/resume <id|n>     open a session (a number from /sessions or /search)
/extend [minutes]  keep the suspended session longer (default 60)
/archive           archive this session (then the hub)
/search <words>    search your sessions
/inbox [n]         your inbox; with a number: read that item
/approve [note]    approve the proposed plan (or: /approve <process> [note])
/reject [note]     reject it, saying why
/quit              leave (the session follows its lifecycle)
ESC                pause what runs in this session; your next message resumes it
a number           answers an open question with that option"""


async def run(chat: Chat, line: str) -> str:
    name, _, arg = line[1:].partition(" ")
    handler = COMMANDS.get(name.lower())
    if handler is None:
        chat.note(f"unknown command /{name}; /help lists them", "red")
        return ""
    return await handler(chat, arg.strip())


async def _help(chat: Chat, arg: str) -> str:
    chat.show(Text(HELP))
    return ""


async def _quit(chat: Chat, arg: str) -> str:
    return "quit"


async def _hub(chat: Chat, arg: str) -> str:
    await chat.open_hub()
    return ""


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


async def _sessions(chat: Chat, arg: str) -> str:
    sessions = await chat.client.rest.sessions(limit=30)
    chat.listed = [s.session_id for s in sessions]
    table = Table("#", "session", "project", "title", "status", "last activity", box=None)
    for i, s in enumerate(sessions, 1):
        here = " *" if s.session_id == chat.client.session_id else ""
        table.add_row(
            str(i),
            s.session_id + here,
            s.project_id,
            s.metadata.title or "",
            s.status or "",
            _when(s.last_activity_at),
        )
    chat.show(table if sessions else Text("no sessions"))
    return ""


def _pick(chat: Chat, arg: str) -> str:
    if arg.isdigit() and 1 <= int(arg) <= len(chat.listed):
        return chat.listed[int(arg) - 1]
    return arg


async def _resume(chat: Chat, arg: str) -> str:
    if not arg:
        chat.note("usage: /resume <session id or number from /sessions>", "red")
        return ""
    await chat.switch(_pick(chat, arg))
    return ""


async def _extend(chat: Chat, arg: str) -> str:
    sid = chat.client.session_id
    if not sid:
        chat.note("no session is open", "red")
        return ""
    minutes = int(arg) if arg.isdigit() else 60
    s = await chat.client.rest.extend(sid, extend_by_ms=minutes * 60_000)
    chat.note(f"extended: {s.status}, next transition {_when(s.transition_at)}", "green")
    return ""


async def _archive(chat: Chat, arg: str) -> str:
    sid = chat.client.session_id
    if not sid:
        chat.note("no session is open", "red")
        return ""
    if sid == chat.hub_session:
        chat.hub_session = None  # the next /hub opens a fresh hub session
    await chat.client.unbind()
    s = await chat.client.rest.archive(sid)
    chat.note(f"archived {s.session_id}", "green")
    await chat.open_hub()
    return ""


async def _search(chat: Chat, arg: str) -> str:
    if not arg:
        chat.note("usage: /search <words>", "red")
        return ""
    result = await chat.client.rest.search(arg)
    chat.listed = [h.session.session_id for h in result.hits]
    if not result.hits:
        chat.note(f"nothing found for {arg!r}")
    for i, hit in enumerate(result.hits, 1):
        s = hit.session
        title = s.metadata.title or "(untitled)"
        chat.show(Text(f"{i}. {title}  {s.session_id}  {s.project_id}  {s.status}", style="bold"))
        for snip in hit.snippets[:2]:
            chat.show(Text(f"     {snip.role}: {snip.text}"))
    return ""


async def _inbox(chat: Chat, arg: str) -> str:
    items = await chat.client.rest.inbox()
    if arg.isdigit() and 1 <= int(arg) <= len(items):
        item = items[int(arg) - 1]
        chat.show(Text(item.title, style="bold magenta"))
        chat.show(Markdown(item.body))
        if not item.read:
            await chat.client.rest.mark_inbox_item(item.id, read=True)
        chat.view.unread = sum(1 for i in items if not i.read and i.id != item.id)
        return ""
    chat.view.unread = sum(1 for i in items if not i.read)
    if not items:
        chat.note("the inbox is empty")
    for i, item in enumerate(items, 1):
        mark = "•" if not item.read else " "
        chat.show(Text(f"{mark} {i}. {item.title}  {_when(item.created_at)}"))
    return ""


def _verdict(command: str) -> Callable[[Chat, str], Awaitable[str]]:
    async def handler(chat: Chat, arg: str) -> str:
        """`process-command` to the chat: Arthur steers the verdict into the target process
        without a model call (docs/protocol.md "process-command")."""
        first, _, rest = arg.partition(" ")
        names = {p.name for p in chat.view.procs.values()}
        target, note = (first, rest) if first in names else (chat.plan_from, arg)
        if not target:
            chat.note(f"no plan waits; /{command} <process> [note]", "red")
            return ""
        said = {"approve": "approved", "reject": "rejected"}[command]
        content = f"{said}: {note}" if note else said
        reply = await chat.client.command(
            command, {"target": target, "content": content}, process_name="chat"
        )
        chat.plan_from = None
        chat.note(f"{command} sent to {target} ({reply.outcome.lower()})", "green")
        return ""

    return handler


COMMANDS: dict[str, Callable[[Chat, str], Awaitable[str]]] = {
    "help": _help,
    "quit": _quit,
    "exit": _quit,
    "hub": _hub,
    "sessions": _sessions,
    "resume": _resume,
    "extend": _extend,
    "archive": _archive,
    "search": _search,
    "inbox": _inbox,
    "approve": _verdict("approve"),
    "reject": _verdict("reject"),
}
