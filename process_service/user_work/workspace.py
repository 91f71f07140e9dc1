"""The user's exec workspace: one directory per user under `<data_dir>/workspaces/`, the only
place a sandboxed script may write (sandbox.py). The document tools read its files as
`workspace/<file>` (documents.py), never write them, and never leave it (no `..`, no symlink
that points outside)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from process_service.tool_args import ToolError
from process_service.user_work.owner import Owner

PREFIX = "workspace/"
MAX_READ_BYTES = 400_000
MAX_LISTED = 500


@dataclass(frozen=True)
class WorkspaceFile:
    path: str  # workspace/<relative path>
    size: int
    updated_at_ms: int


class Workspaces:
    def __init__(self, root: Path) -> None:
        self.root = root

    def dir(self, owner: Owner, *, create: bool = False) -> Path:
        path = self.root / owner.dir_name("tenant") / owner.dir_name("user")
        if create:
            path.mkdir(parents=True, exist_ok=True)
        return path

    def _inside(self, owner: Owner, relative: str) -> Path:
        base = self.dir(owner).resolve()
        target = (base / relative).resolve()
        if target != base and base not in target.parents:
            raise ToolError(f"{PREFIX}{relative} is outside the workspace")
        return target

    def read(self, owner: Owner, path: str) -> tuple[str, int]:
        """(text, size) of workspace/<relative>; binary bytes are replaced, large files cut."""
        relative = path.removeprefix(PREFIX)
        target = self._inside(owner, relative)
        if not target.is_file():
            raise ToolError(f"no file {path!r} in the workspace; see doc_list")
        size = target.stat().st_size
        with target.open("rb") as f:
            data = f.read(MAX_READ_BYTES)
        return data.decode("utf-8", errors="replace"), size

    def files(self, owner: Owner) -> list[WorkspaceFile]:
        base = self.dir(owner)
        if not base.is_dir():
            return []
        found: list[WorkspaceFile] = []
        for folder, dirs, files in os.walk(base, followlinks=False):
            dirs.sort()
            for name in sorted(files):
                full = Path(folder) / name
                if full.is_symlink():
                    continue
                stat = full.stat()
                relative = full.relative_to(base).as_posix()
                found.append(
                    WorkspaceFile(
                        PREFIX + relative, stat.st_size, int(stat.st_mtime_ns // 1_000_000)
                    )
                )
                if len(found) >= MAX_LISTED:
                    return found
        return found
