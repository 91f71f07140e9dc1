"""What a close detail may show (vance/redact.py): the error's words stay, what a reader must
not see (keys, tokens, credentials, internal addresses) is masked."""

from __future__ import annotations

import pytest

from vance.redact import DETAIL_CHARS, clean_detail


@pytest.mark.parametrize(
    ("raw", "shown", "hidden"),
    [
        (
            "ModelCallError: model call failed (401): Incorrect API key provided: "
            "sk-proj-abcdefghijklmnop1234. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "Incorrect API key provided: [redacted-key]. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "abcdefghijklmnop1234",
        ),
        (
            "AioRpcError: failed to connect to all addresses; last error: UNKNOWN: "
            "ipv4:127.0.0.1:50061: Failed to connect",
            "last error: UNKNOWN: [address] Failed to connect",
            "50061",
        ),
        (
            "ServerSelectionTimeoutError: mongodb://vance:hunter2@store.internal:27017/vance"
            "?authSource=admin timed out",
            "mongodb://[address]/vance timed out",
            "hunter2",
        ),
        (
            "ClientConnectorError: Cannot connect to host llm-proxy:8000 ssl:default "
            '[Connect call failed ("10.1.2.3", 8000)]',
            "Cannot connect to host [address] ssl:default",
            "10.1.2.3",
        ),
        (
            "bad request api_key=abc123 and Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2ln",
            "bad request api_key=[redacted] and Authorization:",
            "abc123",
        ),
        (
            "fetching https://example.com/page?key=s3cret failed",
            "fetching https://example.com/page failed",
            "s3cret",
        ),
        ("connect to [::1]:8080 failed; localhost refused", "connect to [address] failed", "::1"),
    ],
)
def test_secrets_and_addresses_are_masked(raw: str, shown: str, hidden: str) -> None:
    clean = clean_detail(raw)
    assert shown in clean, clean
    assert hidden not in clean, clean


@pytest.mark.parametrize(
    "plain",
    [
        "turn failed 3 times: ModelCallError: model call failed (503): overloaded "
        "(gave up after 5 tries in 1.2 s)",
        "the turn could not be sent to a worker: ValueError: a message without content",
        "engine ford 2.0.0 cannot resume a process persisted with 1.0.0",
        "worker lost or lease expired; deadline 2026-12-02T14:37:33 passed, max_tokens=5",
    ],
)
def test_a_detail_without_secrets_is_kept_as_it_is(plain: str) -> None:
    assert clean_detail(plain) == plain


def test_a_long_detail_is_cut() -> None:
    assert len(clean_detail("x" * 10_000)) == DETAIL_CHARS
