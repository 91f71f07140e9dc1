"""The one error the SDK raises: the server's errorCode, reason and message, as sent."""

from __future__ import annotations

from typing import Any


class VanceError(Exception):
    """An `error` frame, a REST error body, or a failure of the connection itself
    (`reason` `connection_lost`, `closed`, or a WebSocket close reason such as `bad_token`)."""

    def __init__(self, code: int, reason: str, message: str = "", *, field: str | None = None):
        super().__init__(f"{code} {reason}: {message}" if message else f"{code} {reason}")
        self.code = code
        self.reason = reason
        self.message = message
        self.field = field

    @classmethod
    def from_body(cls, status: int, body: Any) -> VanceError:
        """From a REST error body `{"detail": {"errorCode", "errorMessage", "reason"}}`."""
        detail = body.get("detail") if isinstance(body, dict) else None
        if isinstance(detail, dict):
            return cls(
                int(detail.get("errorCode", status)),
                str(detail.get("reason", "")),
                str(detail.get("errorMessage", "")),
                field=detail.get("field"),
            )
        return cls(status, "http_error", str(body)[:200])


class ConnectionLost(VanceError):
    """The socket closed while a request waited for its reply; it may or may not have run."""

    def __init__(self, message: str = "the connection closed before the reply") -> None:
        super().__init__(503, "connection_lost", message)


# Close codes after which reconnecting cannot help (docs/protocol.md "Login flow").
FATAL_CLOSE_CODES = {4400, 4401, 4403}
