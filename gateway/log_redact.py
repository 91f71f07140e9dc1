"""Keeps bearer tokens out of the gateway's log: uvicorn logs each WebSocket's path with its
query string (`?token=...`), and a message may quote a header. The filter rewrites every record
before any handler formats it (the patterns are vance/redact.py's, shared with close details)."""

from __future__ import annotations

import logging

from vance.redact import redact_tokens as redact

__all__ = ["RedactTokens", "install", "redact"]


class RedactTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def install() -> None:
    """On every handler of the root logger and of uvicorn's loggers (whichever exist now)."""
    f = RedactTokens()
    names = ("", "uvicorn", "uvicorn.error", "uvicorn.access")
    for name in names:
        logger = logging.getLogger(name)
        if name and not any(isinstance(x, RedactTokens) for x in logger.filters):
            logger.addFilter(f)  # records logged on this logger itself
        for handler in logger.handlers:
            if not any(isinstance(x, RedactTokens) for x in handler.filters):
                handler.addFilter(f)
