"""The terminal client's saved sign-in: `$XDG_CONFIG_HOME/vance/token.json` (default
`~/.config/vance/token.json`), readable by the user alone (mode 0600, its directory 0700)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ValidationError


class Credentials(BaseModel):
    url: str
    tenant: str
    user: str
    token: str
    expires_at: int = 0  # Unix ms


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "vance"


def token_path() -> Path:
    return config_dir() / "token.json"


def save(creds: Credentials) -> Path:
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    # Created with 0600 from the start (never readable by others, not even for a moment);
    # chmod too, for a file left by an older run with wider rights.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(creds.model_dump_json(indent=2))
    path.chmod(0o600)
    return path


def load() -> Credentials | None:
    try:
        return Credentials.model_validate(json.loads(token_path().read_text()))
    except (OSError, ValueError, ValidationError):
        return None


def forget() -> bool:
    try:
        token_path().unlink()
    except FileNotFoundError:
        return False
    return True
