"""The tenant settings of the user's own work (process_service/user_work/, docs/operations.md
"The user's own work"): the web search provider, the fetch allow-list and limits, and whether
and how scripts may run in the sandbox. session_service validates them on write (its `KNOWN`
keys include these); process_service reads the tenant's values per call, so a change applies to
the next tool call."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

SEARCH_URL = "work.search.url"
FETCH_ALLOW_HOSTS = "work.fetch.allowHosts"
FETCH_MAX_BYTES = "work.fetch.maxBytes"
FETCH_TIMEOUT_MS = "work.fetch.timeoutMs"
EXEC_ENABLED = "work.exec.enabled"
EXEC_TIMEOUT_MS = "work.exec.timeoutMs"
EXEC_MEMORY_MB = "work.exec.memoryMb"
EXEC_MAX_OUTPUT_BYTES = "work.exec.maxOutputBytes"

_HOST = re.compile(
    r"^[a-z0-9]([a-z0-9.\-]{0,251}[a-z0-9])?(:[0-9]{1,5})?$|^\[[0-9a-f:.]+\](:[0-9]{1,5})?$"
)


def _url(raw: str) -> str:
    value = raw.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http(s) URL, e.g. http://searx.local/search?format=json")
    return value


def _hosts(raw: str) -> str:
    hosts = [h.strip().lower() for h in raw.split(",") if h.strip()]
    bad = [h for h in hosts if not _HOST.match(h)]
    if bad:
        raise ValueError(f"must be host names or host:port, comma separated; bad: {bad[0]!r}")
    return ",".join(hosts)


def _whole(low: int, high: int) -> Callable[[str], str]:
    def check(raw: str) -> str:
        text = raw.strip()
        if not text.isdigit() or len(text) > len(str(high)) or not low <= int(text) <= high:
            raise ValueError(f"must be a whole number from {low} to {high}")
        return str(int(text))

    return check


def _flag(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValueError("must be true or false")
    return value


WORK_KEYS: dict[str, Callable[[str], str]] = {
    SEARCH_URL: _url,
    FETCH_ALLOW_HOSTS: _hosts,
    FETCH_MAX_BYTES: _whole(1_000, 20_000_000),
    FETCH_TIMEOUT_MS: _whole(100, 120_000),
    EXEC_ENABLED: _flag,
    EXEC_TIMEOUT_MS: _whole(100, 600_000),
    EXEC_MEMORY_MB: _whole(16, 16_384),
    EXEC_MAX_OUTPUT_BYTES: _whole(1_000, 10_000_000),
}


@dataclass(frozen=True)
class WorkSettings:
    search_url: str = ""
    fetch_allow_hosts: frozenset[str] = frozenset()
    fetch_max_bytes: int = 1_000_000
    fetch_timeout_ms: int = 10_000
    exec_enabled: bool = False
    exec_timeout_ms: int = 30_000  # the most a run may ask for, and its default
    exec_memory_mb: int = 512
    exec_max_output_bytes: int = 64_000

    @classmethod
    def from_values(cls, values: Mapping[str, str]) -> WorkSettings:
        """The tenant's effective values; a key that is missing or no longer valid keeps its
        default (session_service checked them on write)."""
        clean: dict[str, str] = {}
        for key, check in WORK_KEYS.items():
            if key in values:
                try:
                    clean[key] = check(values[key])
                except ValueError:
                    continue
        d = cls()
        return cls(
            search_url=clean.get(SEARCH_URL, d.search_url),
            fetch_allow_hosts=frozenset(
                h for h in clean.get(FETCH_ALLOW_HOSTS, "").split(",") if h
            ),
            fetch_max_bytes=int(clean.get(FETCH_MAX_BYTES, d.fetch_max_bytes)),
            fetch_timeout_ms=int(clean.get(FETCH_TIMEOUT_MS, d.fetch_timeout_ms)),
            exec_enabled=clean.get(EXEC_ENABLED, "false") == "true",
            exec_timeout_ms=int(clean.get(EXEC_TIMEOUT_MS, d.exec_timeout_ms)),
            exec_memory_mb=int(clean.get(EXEC_MEMORY_MB, d.exec_memory_mb)),
            exec_max_output_bytes=int(clean.get(EXEC_MAX_OUTPUT_BYTES, d.exec_max_output_bytes)),
        )
