"""Helpers for the tests of clients/python: an SDK client whose events a test can wait on, and a
terminal driven through tmux (a real pty, keys sent, the screen read back)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from vance_client import Event, Frame, VanceClient

from tests.harness import System, eventually

F = TypeVar("F", bound=Frame)
TMUX = "/usr/bin/tmux"


@dataclass
class Seen:
    """Every event a client yielded, in order."""

    events: list[Event] = field(default_factory=list)

    def frames(self, cls: type[F], pred: Callable[[F], bool] = lambda f: True) -> list[F]:
        return [e for e in self.events if isinstance(e, cls) and pred(e)]

    async def wait(
        self, cls: type[F], pred: Callable[[F], bool] = lambda f: True, *, timeout: float = 45
    ) -> F:
        found: F = await eventually(
            lambda: next(iter(self.frames(cls, pred)), None),
            timeout=timeout,
            what=f"a {cls.__name__} frame",
        )
        return found


@contextlib.asynccontextmanager
async def sdk_client(
    system: System, token: str, *, profile: str = ""
) -> AsyncIterator[tuple[VanceClient, Seen]]:
    """A connected VanceClient and what it has yielded so far (read by a task of this block)."""
    seen = Seen()
    async with VanceClient(f"http://{system.gateway}", "default", token, profile=profile) as c:

        async def read() -> None:
            async for event in c.events():
                seen.events.append(event)

        # Owned here and awaited below (not a TaskGroup: a failed assertion in the block
        # should surface as itself, not wrapped in an ExceptionGroup).
        reader = asyncio.create_task(read())
        try:
            yield c, seen
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


def vance_bin() -> str:
    return str(Path(sys.executable).with_name("vance"))


@dataclass
class Terminal:
    """A tmux session of its own server socket (never the user's tmux), 120x40."""

    name: str
    socket: str
    env: dict[str, str]

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return out.stdout

    def start(self, command: str) -> None:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        # `; sleep` keeps the pane after the command ends, so its last words can be read.
        shell = f"export {env}; {command}; echo '[exited]'; sleep 600"
        self._tmux("new-session", "-d", "-s", self.name, "-x", "120", "-y", "40", shell)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.name, "-l", text)
        self._tmux("send-keys", "-t", self.name, "Enter")

    def screen(self) -> str:
        """The visible screen and everything scrolled out of it."""
        return self._tmux("capture-pane", "-p", "-J", "-t", self.name, "-S", "-")

    async def shows(self, text: str, *, timeout: float = 45) -> str:
        def present() -> str | None:
            screen = self.screen()
            return screen if text in screen else None

        try:
            found: str = await eventually(present, timeout=timeout, interval=0.1, what=repr(text))
        except AssertionError as exc:
            raise AssertionError(f"{text!r} not on screen:\n{self.screen()}") from exc
        return found

    def kill(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)


@contextlib.contextmanager
def terminal(tmp: Path) -> Iterator[Terminal]:
    term = Terminal(
        name="t",
        socket=f"vance-test-{uuid.uuid4().hex[:8]}",
        env={
            "XDG_CONFIG_HOME": str(tmp / "config"),
            "TERM": "xterm-256color",
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp),
        },
    )
    try:
        yield term
    finally:
        term.kill()
