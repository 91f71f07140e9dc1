"""Serves the built web client (web/dist, see docs/operations.md) at `/`.

Files are served as built; any other GET path that is not an API route gets index.html, so a
client-side route survives a reload. Paths under the API prefixes never fall back to the app:
a mistyped API URL answers 404 JSON, not HTML."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse

DEFAULT_DIST = Path(__file__).resolve().parent.parent / "web" / "dist"
_API_PREFIXES = ("brain/", "healthz", "docs", "redoc", "openapi.json")
# Vite puts a content hash into every asset name: they never change under one name.
_IMMUTABLE = "public, max-age=31536000, immutable"


def dist_dir() -> Path:
    return Path(os.environ.get("VANCE_WEB_DIST") or DEFAULT_DIST)


def mount_webui(app: FastAPI, dist: Path | None = None) -> None:
    root = (dist or dist_dir()).resolve()

    @app.get("/{path:path}", include_in_schema=False)
    async def webui(path: str) -> FileResponse:
        if path.startswith(_API_PREFIXES):
            raise HTTPException(404, {"errorMessage": f"no route /{path}", "reason": "not_found"})
        index = root / "index.html"
        if not index.is_file():
            raise HTTPException(
                503,
                {
                    "errorMessage": "the web client is not built: run `make run` or `make web`",
                    "reason": "webui_not_built",
                },
            )
        target = (root / path).resolve()
        if path and target.is_file() and target.is_relative_to(root):
            headers = {"cache-control": _IMMUTABLE} if path.startswith("assets/") else {}
            return FileResponse(target, headers=headers)
        return FileResponse(index, headers={"cache-control": "no-cache"})
