"""Engine settings of memory, RAG and Arthur's model (docs/architecture.md "Memory and RAG"),
checked here and merged into the engine keys (settings/engine_settings.py), so they can be set at
every
level of the cascade; engine_worker/engines/ reads them per turn, process_service reads
`rag.embeddingModel` per tenant (process_service/knowledge/embeddings.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

ARTHUR_PROVIDER = "arthur.llmProvider"
ARTHUR_MODEL = "arthur.llmModel"
MEMORY_TOKENS = "arthur.memoryTokens"
RAG_AUTO_INJECT = "rag.autoInject"
RAG_AUTO_INJECT_ENABLED = "rag.autoInject.enabled"  # seed 000 §3.8's cascade name
RAG_MIN_SCORE = "rag.minScore"
RAG_TOP_K = "rag.topK"
RAG_EMBEDDING_MODEL = "rag.embeddingModel"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,119}$")


def _name(raw: str) -> str:
    value = raw.strip()
    if not _NAME.match(value):
        raise ValueError("must be a model or provider name (letters, digits, . _ : / @ -)")
    return value


def _flag(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValueError("must be true or false")
    return value


def _score(raw: str) -> str:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("must be a number from 0 to 1") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be a number from 0 to 1")
    return str(value)


def _whole(low: int, high: int) -> Callable[[str], str]:
    def check(raw: str) -> str:
        if not raw.strip().isdigit() or not low <= int(raw) <= high:
            raise ValueError(f"must be a whole number from {low} to {high}")
        return str(int(raw))

    return check


KNOWLEDGE_KEYS: dict[str, Callable[[str], str]] = {
    ARTHUR_PROVIDER: _name,
    ARTHUR_MODEL: _name,
    MEMORY_TOKENS: _whole(50, 32_000),
    RAG_AUTO_INJECT: _flag,
    RAG_AUTO_INJECT_ENABLED: _flag,
    RAG_MIN_SCORE: _score,
    RAG_TOP_K: _whole(1, 20),
    RAG_EMBEDDING_MODEL: _name,
}
