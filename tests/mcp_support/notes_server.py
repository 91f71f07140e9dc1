"""A small MCP tool server for the tests, over stdio or streamable HTTP.

`python -m tests.mcp_support.notes_server stdio <pidfile>` or
`python -m tests.mcp_support.notes_server http <port> <pidfile>`: writes its pid to <pidfile>
(so a test can kill exactly this process) and serves two tools, `shout` and `add`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def shout(text: str) -> str:
    """Returns the text in capitals, with the server's pid so a test sees which process answered."""
    return f"{text.upper()} (pid {os.getpid()})"


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


def main() -> None:
    mode = sys.argv[1]
    Path(sys.argv[-1]).write_text(str(os.getpid()))
    if mode == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))


if __name__ == "__main__":
    main()
