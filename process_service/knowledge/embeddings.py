"""Embeddings from an OpenAI-compatible `/embeddings` endpoint, through the model settings every
chat call uses (`llm.api_base`, `llm.api_key`, vance/config.py); which model is the tenant's
setting `rag.embeddingModel` (none: RAG ranks by keywords only). The setting is read through
session_service at most every SETTING_TTL_S per tenant."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vance.config import LlmConfig
from vance.llm_core import OPENAI_PREFIX
from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

EMBEDDING_MODEL = "rag.embeddingModel"
SETTING_TTL_S = 5.0
BATCH = 64
TIMEOUT_S = 30.0


class EmbeddingError(Exception):
    pass


class Embedder:
    def __init__(
        self, config: LlmConfig, sessions: session_pb2_grpc.SessionServiceAsyncStub | None
    ) -> None:
        self._config = config
        self._sessions = sessions
        self._models: dict[str, tuple[float, str]] = {}
        self._http: aiohttp.ClientSession | None = None

    async def model(self, tenant: str) -> str:
        """The tenant's embedding model, "" for none (or when the setting cannot be read)."""
        if self._sessions is None or not self._config.api_base:
            return ""
        now = time.monotonic()
        hit = self._models.get(tenant)
        if hit is not None and hit[0] > now:
            return hit[1]
        try:
            found = await self._sessions.GetSettings(spb.GetSettingsRequest(tenant_id=tenant))
            model = str(found.effective.get(EMBEDDING_MODEL, "")).strip()
        except Exception:
            logger.warning("the embedding setting of %s could not be read", tenant, exc_info=True)
            model = ""
        self._models[tenant] = (now + SETTING_TTL_S, model)
        return model

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one per text, in order."""
        out: list[list[float]] = []
        for i in range(0, len(texts), BATCH):
            out += await self._batch(model, list(texts[i : i + BATCH]))
        return out

    async def _batch(self, model: str, texts: list[str]) -> list[list[float]]:
        # Imported on first use: most projects embed nothing, and aiohttp is a tenth of
        # process_service's start (its restart time, docs/operations.md "Failure model").
        import aiohttp

        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT_S))
        url = self._config.api_base.rstrip("/") + "/embeddings"
        headers = (
            {"Authorization": f"Bearer {self._config.api_key}"} if self._config.api_key else {}
        )
        body = {"model": model.removeprefix(OPENAI_PREFIX), "input": texts}
        try:
            async with self._http.post(url, json=body, headers=headers) as resp:
                payload = await resp.json(content_type=None)
                if resp.status != 200:
                    raise EmbeddingError(f"embeddings answered {resp.status}: {payload}")
        except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
            raise EmbeddingError(f"embeddings failed: {exc}") from exc
        try:
            rows = sorted(payload["data"], key=lambda d: int(d.get("index", 0)))
            vectors = [_unit([float(x) for x in row["embedding"]]) for row in rows]
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"embeddings answered an unexpected shape: {exc}") from exc
        if len(vectors) != len(texts):
            raise EmbeddingError(f"asked {len(texts)} embeddings, got {len(vectors)}")
        return vectors

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else v
