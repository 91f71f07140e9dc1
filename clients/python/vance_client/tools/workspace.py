"""The folder a user lends the agents: every path a client tool names must resolve inside it.

Paths are resolved with symlinks followed (`Path.resolve`), so a link that points out of the
root is refused like `../..` or an absolute path elsewhere; a path that does not exist yet is
resolved through its nearest existing parent, so a new file in a linked-out folder is refused
too."""

from __future__ import annotations

from pathlib import Path


class ToolRefused(Exception):
    """A call the host will not run: a path outside the root, bad params, the user said no."""


class Workspace:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().resolve(strict=True)
        if not self.root.is_dir():
            raise ToolRefused(f"the workspace {self.root} is not a folder")

    def path(self, name: object) -> Path:
        """The resolved path of `name` (relative to the root, or absolute inside it)."""
        if not isinstance(name, str) or not name.strip():
            raise ToolRefused("'path' must be a non-empty string")
        if "\x00" in name:
            raise ToolRefused("'path' must not contain NUL")
        candidate = Path(name).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve(strict=False)
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise ToolRefused(f"{name!r} is outside the workspace {self.root}")
        return resolved

    def relative(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path != self.root else "."
