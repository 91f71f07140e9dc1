"""The `vance chat` terminal client (the `terminal` extra: rich and prompt_toolkit)."""
