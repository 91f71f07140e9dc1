"""MCP test servers written with the `mcp` package (tests/test_mcp_tools.py)."""
