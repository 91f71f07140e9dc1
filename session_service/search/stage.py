"""The seam between a search (query.py) and the ways it finds sessions: search stages.

A stage turns a query into candidate sessions, each with the highest score the stage may give
it; the search ranks the candidates the caller may see, reads the best ones' session
documents, and asks the stage to check each against its document (titles and tags change, so
an index can be behind) and where in the conversation it matched. The full-text stage
(fulltext.py: title, tags and conversation words) is the one built; a semantic stage (embedded
conversation chunks) would be a second implementation whose scores add to the first's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from session_service.domain.models import Session
from session_service.search.tokens import Snippet


@dataclass(frozen=True)
class MessageSnippet:
    message_id: str
    process_name: str
    role: str
    created_at_ms: int
    snippet: Snippet


@dataclass(frozen=True)
class StageMatch:
    score: int
    matched: frozenset[str]  # of "title", "tags", "conversation"


class StageFindings(Protocol):
    """What one stage found for one query."""

    def bounds(self, scope: Collection[str]) -> dict[str, int]:
        """Candidates among `scope` -> the highest score the stage may give each."""
        ...

    def check(self, session: Session) -> StageMatch | None:
        """The stage's match against the session's current document; None: none after all."""
        ...

    async def snippets(self, session_ids: Sequence[str]) -> dict[str, list[MessageSnippet]]:
        """Where these candidates matched in their conversation (read beside their
        documents, so also for some that `check` turns down)."""
        ...


class SearchStage(Protocol):
    async def find(self, tenant: str, query: str) -> StageFindings | None:
        """None: the query holds nothing for this stage (without any, the search lists)."""
        ...
