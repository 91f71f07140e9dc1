"""tool_service: the tool registry and invocation routing."""
