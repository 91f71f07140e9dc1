"""Which of Eddie's `switch-to` frames the terminal has followed, kept across runs."""

from __future__ import annotations

import json
from typing import Any

from vance_client.credentials import config_dir


class Followed:
    """The highest switch-to seq followed per hub session, in the config directory (as the
    web client keeps it in its storage)."""

    def __init__(self) -> None:
        self.path = config_dir() / "followed.json"
        try:
            raw: Any = json.loads(self.path.read_text())
            self.seqs: dict[str, int] = {str(k): int(v) for k, v in dict(raw).items()}
        except (OSError, ValueError, TypeError):
            self.seqs = {}

    def first_time(self, session_id: str, seq: int) -> bool:
        if seq <= self.seqs.get(session_id, 0):
            return False
        self.seqs[session_id] = seq
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.seqs))
        except OSError:
            pass  # still followed once in this run
        return True
