"""The tools the terminal client hosts for the agents (issue 23 part 3, the client's half):
their declarations for `client-tool-register`, and `ToolHost.invoke` for `client-tool-invoke`.

Every path is confined to the workspace root the user named; writes, edits and commands ask the
user first (`confirm`) unless the client was started with `--allow`. A refusal or a failure is
a result with `status: ERROR` and a reason the model reads, never an exception to the caller."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from vance_client.tools import files
from vance_client.tools.execs import MAX_WAIT_MS, Execs
from vance_client.tools.workspace import ToolRefused, Workspace

Confirm = Callable[[str], Awaitable[bool]]

_PATH = {"type": "string", "description": "relative to the workspace root"}

# How long the server waits for an answer (`timeoutMs` in the register frame; the gateway allows
# 1 s to 10 min, default 30 s): a file call takes milliseconds, a command up to its waitMs, and a
# call that asks the user first adds the time a person takes to read the question and answer.
RUN_MS = 30_000
QUESTION_MS = 300_000


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    asks: bool  # needs the user's yes unless --allow
    run_ms: int = RUN_MS

    def wire(self, *, allow: bool) -> dict[str, Any]:
        """The tool as `client-tool-register` carries it (gateway/client_tools.py
        ClientToolSpec)."""
        timeout = self.run_ms + (QUESTION_MS if self.asks and not allow else 0)
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "timeoutMs": timeout,
        }


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


SPECS = [
    ToolSpec(
        "client_file_read",
        "Read a UTF-8 text file in the user's workspace.",
        _schema(["path"], path=_PATH),
        False,
    ),
    ToolSpec(
        "client_file_list", "List a folder of the user's workspace.", _schema([], path=_PATH), False
    ),
    ToolSpec(
        "client_file_write",
        "Write (create or replace) a text file in the user's workspace.",
        _schema(["path", "content"], path=_PATH, content={"type": "string"}),
        True,
    ),
    ToolSpec(
        "client_file_edit",
        "Replace one exact, unique occurrence of `old` by `new` in a workspace file.",
        _schema(["path", "old", "new"], path=_PATH, old={"type": "string"}, new={"type": "string"}),
        True,
    ),
    ToolSpec(
        "client_exec_run",
        "Run a shell command in the workspace; waits up to waitMs, then answers with the output so far and an id.",
        _schema(["command"], command={"type": "string"}, waitMs={"type": "integer"}),
        True,
        MAX_WAIT_MS + RUN_MS,
    ),
    ToolSpec(
        "client_exec_status",
        "Output and state of a command started with client_exec_run.",
        _schema(["id"], id={"type": "string"}),
        False,
    ),
    ToolSpec(
        "client_exec_kill",
        "Stop a command started with client_exec_run.",
        _schema(["id"], id={"type": "string"}),
        False,
    ),
]


class ToolHost:
    def __init__(self, root: str, *, allow: bool = False, confirm: Confirm | None = None) -> None:
        self.workspace = Workspace(root)
        self.allow = allow
        self.confirm = confirm
        self.execs = Execs(self.workspace)
        self.specs = {s.name: s for s in SPECS}

    async def close(self) -> None:
        await self.execs.close()

    def declarations(self) -> list[dict[str, Any]]:
        """The tools for `client-tool-register`. The workspace root is not sent: paths are
        relative to it, and the server has no use for where it is on this machine."""
        return [s.wire(allow=self.allow) for s in SPECS]

    async def invoke(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """`{"status": "SUCCESS", "result": {...}}` or `{"status": "ERROR", "error": "..."}`."""
        spec = self.specs.get(name)
        if spec is None:
            return {"status": "ERROR", "error": f"this client hosts no tool {name!r}"}
        try:
            if "path" in spec.parameters["properties"] and "path" in params:
                self.workspace.path(params["path"])  # outside the root: refused, never asked
            if spec.asks and not self.allow:
                if self.confirm is None or not await self.confirm(_describe(name, params)):
                    raise ToolRefused("the user declined")
            result = await self._run(name, params)
        except ToolRefused as exc:
            return {"status": "ERROR", "error": str(exc)}
        except OSError as exc:
            return {"status": "ERROR", "error": f"{type(exc).__name__}: {exc.strerror or exc}"}
        return {"status": "SUCCESS", "result": result}

    async def _run(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        ws = self.workspace
        match name:
            # File calls are short blocking I/O: off the event loop, which reads the socket.
            case "client_file_read":
                return await asyncio.to_thread(files.read, ws, params)
            case "client_file_list":
                return await asyncio.to_thread(files.list_dir, ws, params)
            case "client_file_write":
                return await asyncio.to_thread(files.write, ws, params)
            case "client_file_edit":
                return await asyncio.to_thread(files.edit, ws, params)
            case "client_exec_run":
                return await self.execs.run(params)
            case "client_exec_status":
                return await self.execs.status(params)
            case "client_exec_kill":
                return await self.execs.kill(params)
        raise ToolRefused(f"unknown tool {name!r}")


def _describe(name: str, params: dict[str, Any]) -> str:
    match name:
        case "client_file_write":
            return (
                f"write {params.get('path')!r} ({len(str(params.get('content', '')))} characters)"
            )
        case "client_file_edit":
            return f"edit {params.get('path')!r}"
        case "client_exec_run":
            return f"run `{params.get('command')}`"
    return name
