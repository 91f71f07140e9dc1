"""Tests' fault hooks: places where process_service can be made to exit at the one moment a
crash is hardest on it (tests/test_outbox.py, tests/test_redo_events.py)."""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

EXIT_CODE = 3  # not a signal: a test tells the hook's exit from a kill


class FaultPoint:
    """Armed while the file at `path` exists (empty path: never). The first pass through the
    point removes the file and exits the process at once, as a crash would."""

    def __init__(self, path: str, where: str) -> None:
        self._path = path
        self._where = where

    def hit(self) -> None:
        if self._path and os.path.exists(self._path):
            os.remove(self._path)
            logger.error("fault hook: exiting %s", self._where)
            os._exit(EXIT_CODE)
