"""What the terminal shows besides the scrollback: the live answer being streamed and the status
line (link, where the user is, the session's process tree with statuses, unread inbox)."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from rich.console import Console
from rich.markdown import Markdown

from vance_client.frames import ProcessProgress, ProcessSpawned
from vance_client.models import ProcessInfo

PREVIEW_LINES = 8


@dataclass
class Proc:
    name: str
    status: str
    parent: str | None


def render_ansi(renderable: object, width: int) -> str:
    """A rich renderable as ANSI text, for prompt_toolkit to place (scrollback or toolbar)."""
    buf = io.StringIO()
    Console(
        file=buf, width=width, force_terminal=True, color_system="standard", legacy_windows=False
    ).print(renderable)
    return buf.getvalue()


@dataclass
class View:
    width: int = 100
    link: str = "connecting"
    where: str = ""
    unread: int = 0
    procs: dict[str, Proc] = field(default_factory=dict)
    streams: dict[str, str] = field(default_factory=dict)  # process id -> text so far

    def reset(self, where: str, processes: list[ProcessInfo]) -> None:
        self.where = where
        self.streams.clear()
        self.procs = {
            p.think_process_id: Proc(p.process_name, p.status, p.parent_process_id)
            for p in processes
        }

    def progress(self, frame: ProcessProgress) -> None:
        d = frame.data
        if frame.forwarded_by is not None or not frame.is_status_change:
            return  # a worker Eddie observes lives in another session: not this tree
        self.procs[d.process_id] = Proc(d.process_name, d.status or "", d.parent_process_id)

    def spawned(self, frame: ProcessSpawned) -> None:
        d = frame.data
        self.procs.setdefault(d.child_process_id, Proc(d.child_process_name, "INIT", d.process_id))

    def status_of(self, name: str) -> str:
        return next((p.status for p in self.procs.values() if p.name == name), "")

    def tree(self) -> str:
        """`chat IDLE [counter RUNNING [sub INIT]]`: open processes, children in brackets."""

        def node(pid: str) -> str:
            p = self.procs[pid]
            kids = [k for k, c in self.procs.items() if c.parent == pid and c.status != "CLOSED"]
            inner = ", ".join(node(k) for k in kids)
            return f"{p.name} {p.status}" + (f" [{inner}]" if inner else "")

        roots = [
            pid
            for pid, p in self.procs.items()
            if (p.parent is None or p.parent not in self.procs) and p.status != "CLOSED"
        ]
        return ", ".join(node(r) for r in roots) or "-"

    def status_line(self) -> str:
        link = {"connected": "\x1b[32m●\x1b[0m", "connecting": "\x1b[33m○\x1b[0m"}.get(
            self.link, "\x1b[31m○\x1b[0m"
        )
        inbox = f" · inbox {self.unread}" if self.unread else ""
        return f"{link} {self.link} · {self.where} · {self.tree()}{inbox} · ESC pause · /help"

    def toolbar(self) -> str:
        """The live part under the scrollback: streamed text (Markdown), then the status."""
        parts: list[str] = []
        for text in self.streams.values():
            lines = render_ansi(Markdown(text), self.width).rstrip("\n").splitlines()
            parts.extend(lines[-PREVIEW_LINES:])
        parts.append(self.status_line())
        return "\n".join(parts)
