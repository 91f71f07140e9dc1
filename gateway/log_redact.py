"""Keeps bearer tokens out of the gateway's log: uvicorn logs each WebSocket's path with its
query string (`?token=...`), and a message may quote a header. The filter rewrites every record
before any handler formats it."""

from __future__ import annotations

import logging
import re

_PATTERNS = (
    # ?token=... / &token=... in a logged path or URL
    (re.compile(r"([?&](?:token|access_token)=)[^&\s\"']+", re.IGNORECASE), r"\1[redacted]"),
    # Authorization: Bearer ... , "bearer ..." in a quoted header
    (re.compile(r"(bearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE), r"\1[redacted]"),
    # a token offered as a WebSocket subprotocol
    (re.compile(r"(vance\.bearer\.)[A-Za-z0-9._~+/=-]+"), r"\1[redacted]"),
    # anything that looks like a JWT (three base64url parts, the first a JSON header)
    (re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"), "[redacted-jwt]"),
)


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


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
