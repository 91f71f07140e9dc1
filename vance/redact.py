"""Masks secrets and internal addresses in text that leaves the servers: a process's close
detail (an exception's message, a provider's error body) reaches gRPC callers, WebSocket and
REST clients, the web client and a parent process's model (docs/protocol.md "Close detail")."""

from __future__ import annotations

import re

# The longest close detail kept; the rest of a long error is in the services' logs.
DETAIL_CHARS = 2000

# Bearer tokens and keys, wherever they appear (the gateway's log filter uses these too).
TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # ?token=... / &token=... in a logged path or URL
    (re.compile(r"([?&](?:token|access_token)=)[^&\s\"']+", re.IGNORECASE), r"\1[redacted]"),
    # Authorization: Bearer ... , "bearer ..." in a quoted header
    (re.compile(r"(bearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE), r"\1[redacted]"),
    # a token offered as a WebSocket subprotocol
    (re.compile(r"(vance\.bearer\.)[A-Za-z0-9._~+/=-]+"), r"\1[redacted]"),
    # anything that looks like a JWT (three base64url parts, the first a JSON header)
    (re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"), "[redacted-jwt]"),
)

_DETAIL_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # A provider's key as its error body may quote it ("Incorrect API key provided: sk-..."):
    # OpenAI's and Anthropic's sk-..., Google's AIza...
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{8,}"), "[redacted-key]"),
    (re.compile(r"\bAIza[A-Za-z0-9_-]{20,}"), "[redacted-key]"),
    # api_key=..., "password": "...", secret: ... (not max_tokens: the name stands alone)
    (
        re.compile(
            r"(?<![\w-])((?:api[_-]?key|x-api-key|access[_-]?token|token|secret|password|passwd"
            r"|authorization)[\"']?\s*[:=]\s*[\"']?)(?!\[redacted)[^\s\"'&,;}]+",
            re.IGNORECASE,
        ),
        r"\1[redacted]",
    ),
    # user:password@ in a URL (a store or proxy URI)
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@"), r"\1"),
    # a URL's query may carry a key
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s?#\"']*)\?[^\s\"']*"), r"\1"),
    # gRPC's peers (ipv4:10.0.0.7:50051, unix:/run/x.sock), IP addresses, bracketed IPv6
    (re.compile(r"\b(?:ipv4|ipv6|unix|unix-abstract):[^\s,;\"')]+"), "[address]"),
    (re.compile(r"\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\](?::\d+)?"), "[address]"),
    (re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b"), "[address]"),
    # a host with a port (process-service:50051, localhost:8000, llm.corp.internal:443)
    (
        re.compile(r"(?<![\w.-])(?:[A-Za-z][A-Za-z0-9-]*\.)*[A-Za-z][A-Za-z0-9-]*:\d{2,5}\b"),
        "[address]",
    ),
    (re.compile(r"\blocalhost\b"), "[address]"),
)


def redact_tokens(text: str) -> str:
    """Bearer tokens, token query parameters and JWTs replaced by a marker."""
    for pattern, replacement in TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def clean_detail(text: str) -> str:
    """A close detail fit to show: tokens, keys, credentials, URL queries and internal
    addresses masked, at most DETAIL_CHARS characters. What the original said is in the log of
    the service that saw the error (the worker logs a failed turn with its traceback)."""
    text = redact_tokens(text)
    for pattern, replacement in _DETAIL_PATTERNS:
        text = pattern.sub(replacement, text)
    return text[:DETAIL_CHARS]
