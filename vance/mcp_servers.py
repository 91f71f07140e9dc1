"""The `tools.mcp.servers` setting: which MCP tool servers a tenant's or project's processes
reach (docs/clients.md "MCP tool servers"). session_service checks it on write (settings.py),
tool_service reads it to connect (tool_service/mcp_hub.py).

The value is a JSON list of servers, each either a stdio command or a streamable-HTTP URL:

    [{"name": "files", "command": "python", "args": ["-m", "files_server"]},
     {"name": "issues", "url": "https://mcp.example.com/mcp",
      "headers": {"Authorization": "Bearer ${secret:ISSUES_TOKEN}"}, "timeoutMs": 20000}]

Header values may name secrets (`${secret:NAME}`); the setting holds only the name, so reading
settings never shows a secret. tool_service reads the value from its secrets directory.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, model_validator

SETTING_MCP_SERVERS = "tools.mcp.servers"
# `__` separates the server from its tool in a pool name, so a server name has no underscore.
SERVER_NAME = r"^[a-z][a-z0-9-]{0,31}$"
SECRET_REF = re.compile(r"\$\{secret:([A-Za-z0-9_.-]{1,64})\}")
MAX_SERVERS = 16
DEFAULT_TIMEOUT_MS = 30_000

Name = Annotated[StrictStr, Field(pattern=SERVER_NAME)]
Short = Annotated[StrictStr, Field(max_length=4_096)]


class McpServer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: Name
    command: Short = ""
    args: list[Short] = Field(default_factory=list, max_length=64)
    env: dict[str, Short] = Field(default_factory=dict, max_length=64)
    url: Annotated[StrictStr, Field(max_length=2_048)] = ""
    headers: dict[str, Short] = Field(default_factory=dict, max_length=32)
    # How long one tool call may take before the model gets a TIMEOUT result.
    timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1_000, le=600_000, alias="timeoutMs")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if bool(self.command) == bool(self.url):
            raise ValueError(f"server {self.name!r} needs exactly one of command or url")
        if self.url and not re.match(r"^https?://", self.url):
            raise ValueError(f"server {self.name!r}: url must start with http:// or https://")
        if self.command and self.headers:
            raise ValueError(f"server {self.name!r}: headers are for url servers")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command else "http"

    def secrets(self) -> list[str]:
        return [m for v in self.headers.values() for m in SECRET_REF.findall(v)]


def parse_servers(raw: str) -> list[McpServer]:
    """The servers of a setting value; ValueError says what is wrong."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"must be a JSON list of servers ({exc.msg})") from None
    if not isinstance(data, list):
        raise ValueError("must be a JSON list of servers")
    if len(data) > MAX_SERVERS:
        raise ValueError(f"at most {MAX_SERVERS} servers")
    try:
        servers = [McpServer.model_validate(item) for item in data]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}: {first['msg']}" if where else first["msg"]) from None
    names = [s.name for s in servers]
    if len(set(names)) != len(names):
        raise ValueError("server names must be unique")
    return servers


def normalise(raw: str) -> str:
    """The settings check (session_service/settings/session_settings.py): the value as compact
    JSON."""
    servers = parse_servers(raw)
    return json.dumps(
        [s.model_dump(by_alias=True, exclude_defaults=True) | {"name": s.name} for s in servers],
        separators=(",", ":"),
    )
