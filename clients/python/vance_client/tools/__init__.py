"""Tools the terminal client hosts on the user's machine, confined to a workspace root."""
