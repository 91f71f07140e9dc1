"""client_file_read, client_file_list, client_file_write, client_file_edit: files in the
workspace (vance_client/tools/workspace.py). Text only, UTF-8; results are JSON objects."""

from __future__ import annotations

from typing import Any

from vance_client.tools.workspace import ToolRefused, Workspace

MAX_READ_CHARS = 200_000
MAX_LIST_ENTRIES = 1_000


def _text(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise ToolRefused(f"'{key}' must be a string")
    return value


def read(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    path = ws.path(params.get("path"))
    if not path.is_file():
        raise ToolRefused(f"no file {ws.relative(path)!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ToolRefused(f"{ws.relative(path)!r} is not UTF-8 text") from exc
    cut = len(text) > MAX_READ_CHARS
    return {"path": ws.relative(path), "content": text[:MAX_READ_CHARS], "truncated": cut}


def list_dir(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    path = ws.path(params.get("path") or ".")
    if not path.is_dir():
        raise ToolRefused(f"no folder {ws.relative(path)!r}")
    entries = []
    for child in sorted(path.iterdir())[:MAX_LIST_ENTRIES]:
        kind = "dir" if child.is_dir() else "file"
        entry: dict[str, Any] = {"name": child.name, "type": kind}
        if kind == "file":
            entry["size"] = child.stat().st_size if child.exists() else 0
        entries.append(entry)
    return {"path": ws.relative(path), "entries": entries}


def write(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    path = ws.path(params.get("path"))
    content = _text(params, "content")
    if path.is_dir():
        raise ToolRefused(f"{ws.relative(path)!r} is a folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return {"path": ws.relative(path), "written": len(content)}


def edit(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """Replaces `old` by `new`; `old` must occur exactly once (so the edit is unambiguous)."""
    path = ws.path(params.get("path"))
    old, new = _text(params, "old"), _text(params, "new")
    if not old:
        raise ToolRefused("'old' must not be empty")
    current = read(ws, {"path": str(path)})["content"]
    count = current.count(old)
    if count != 1:
        raise ToolRefused(f"'old' occurs {count} times in {ws.relative(path)!r}; it must once")
    path.write_text(current.replace(old, new, 1), encoding="utf-8")
    return {"path": ws.relative(path), "replaced": 1}
