"""Wiring of metadata, search and the search indexer, built once per session_service replica."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from session_service.domain.models import Session, SessionStatus
from session_service.search.index_store import SearchStore
from session_service.search.indexer import SearchIndexer
from session_service.search.query import SessionSearch
from session_service.search.session_metadata import Metadata
from session_service.search.suggest import Suggester
from session_service.store.raw import Db
from session_service.store.session_store import SessionStore
from vance.background import Background
from vance.clients.process import Processes
from vance.clock import Clock
from vance.config import LlmConfig
from vance.llm import (
    ChunkSink,
    ModelClient,
    ModelReply,
    StreamedArgs,
    is_configured,
    make_model_client,
    warm_up_clients,
)

logger = logging.getLogger(__name__)

SUGGEST_PURPOSE = "session-metadata"


class LazyModel:
    """The model client, created on the first suggestion. It routes as the workers' does
    (vance/llm.py `make_model_client`: OpenAI-compatible models direct, litellm for the
    rest), so a suggestion costs a fraction of a millisecond of CPU rather than litellm's ~10;
    litellm is imported (seconds of CPU and much memory, in a thread) only when a configured
    model needs it."""

    def __init__(self, config: LlmConfig) -> None:
        self._config = config
        self._client: ModelClient | None = None
        self._lock = asyncio.Lock()

    async def warm(self) -> None:
        """Pays the client's imports and first-call set-up ahead of the first suggestion, so
        the first session's suggestion does not wait for it."""
        async with self._lock:
            if self._client is None:
                await warm_up_clients(self._config)
                self._client = make_model_client(self._config, purpose=SUGGEST_PURPOSE)

    async def complete(
        self,
        *,
        tier: str,
        messages: list[dict[str, Any]],  # JSON boundary: vance.llm's ModelClient.complete
        tools: list[dict[str, Any]] | None = None,  # JSON boundary: as `messages`
        on_chunk: ChunkSink | None = None,
        temperature: float | None = None,
        stream_args: StreamedArgs | None = None,
    ) -> ModelReply:
        await self.warm()
        assert self._client is not None
        return await self._client.complete(
            tier=tier,
            messages=messages,
            tools=tools,
            on_chunk=on_chunk,
            temperature=temperature,
            stream_args=stream_args,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class SearchHook:
    """Follows the lifecycle transitions (session_service/lifecycle/hooks.py): rewrites the
    session's
    card where default visibility changes (archive, reactivate), and on a hard delete removes
    the session's card and everything the index holds of it."""

    def __init__(self, store: SessionStore, indexer: SearchIndexer, clock: Clock) -> None:
        self._store = store
        self._indexer = indexer
        self._clock = clock

    async def on_session_archived(self, session: Session) -> None:
        self._indexer.forget_session(session)  # held memory (docs/operations.md "Memory")
        fresh = await self._store.session(session.session_id) or session
        await self._store.cards.put(fresh, self._clock.now_ms())

    async def on_session_unarchived(self, session: Session) -> None:
        # Called before the reactivation finishes: the card says "open" at once; should the
        # reactivation fail, the check against the document hides the session again.
        await self._store.cards.put(session, self._clock.now_ms(), status=SessionStatus.IDLE.value)

    async def on_session_deleted(self, session: Session) -> None:
        await self._indexer.deleted(session)
        await self._store.cards.remove(
            session.tenant_id, session.owner_user_id, {session.session_id}
        )


@dataclass
class SearchServices:
    metadata: Metadata
    search: SessionSearch
    indexer: SearchIndexer
    hook: SearchHook
    model: LazyModel | None = None

    def start(self, background: Background) -> None:
        """The indexer for the server's life; the model warm-up once, best effort (the first
        suggestion prepares the client anyway)."""
        background.start("search-indexer", self.indexer.run())
        if self.model is not None:
            background.start(
                "search-model-warm-up", self.model.warm(), forever=False, best_effort=True
            )


def build_search(
    db: Db,
    store: SessionStore,
    clock: Clock,
    processes: Processes,
    llm: LlmConfig,
) -> SearchServices:
    index = SearchStore(db)
    metadata = Metadata(store, index, clock)
    model = LazyModel(llm) if is_configured(llm) else None
    suggester = Suggester(model) if model is not None else None
    if suggester is None:
        logger.info("no model configured: session metadata is not auto-suggested")
    indexer = SearchIndexer(
        sessions=store,
        index=index,
        metadata=metadata,
        processes=processes,
        suggester=suggester,
        clock=clock,
    )
    return SearchServices(
        metadata=metadata,
        search=SessionSearch(store, index, clock),
        indexer=indexer,
        hook=SearchHook(store, indexer, clock),
        model=model,
    )
