"""Arthur's system prompt, rendered for every turn: the recipe's prompt (rendered once at spawn
by recipe_service), then where and when the turn happens (tenant, group, project, user, date,
the chat language), the project's memory most relevant to the turn, and with RAG auto-inject
the best passages of the project's documents (engines/knowledge_turn.py). Rendering it per turn
makes a changed setting or language, the date and new project memory count from the next turn
on."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from engine_worker.context import ThinkEngineContext
from engine_worker.engines.knowledge_turn import project_memory, rag_context


@dataclass(frozen=True)
class TurnContext:
    tenant: str
    group: str
    project: str
    user: str
    date: str
    language: str
    memory: str
    rag: str = ""


async def turn_context(
    ctx: ThinkEngineContext,
    *,
    include_memory: bool,
    language: str,
    query: str = "",
    rag_query: str = "",
) -> TurnContext:
    """`query` ranks the project's memory; `rag_query` (the user's words) finds passages."""
    memory = await project_memory(ctx, query) if include_memory else ""
    return TurnContext(
        tenant=ctx.scope.tenant_id,
        group=ctx.scope.group,
        project=ctx.scope.project_id,
        user=ctx.user,
        date=_today(),
        language=language,
        memory=memory,
        rag=await rag_context(ctx, rag_query),
    )


_day: tuple[int, str] = (-1, "")  # (day since the epoch, its text)
_SECONDS_A_DAY = 86_400


def _today() -> str:
    """The UTC date as the prompt says it; strftime with a weekday name (the locale's) once a
    day, not once a turn."""
    global _day
    day = int(time.time()) // _SECONDS_A_DAY
    if _day[0] != day:
        _day = (day, datetime.now(UTC).strftime("%Y-%m-%d %A"))
    return _day[1]


def render(prompt: str, turn: TurnContext) -> str:
    """The turn's system prompt, put together directly: a jinja template (sandboxed) took
    about 50 us of every turn (issue 28); tests/test_arthur_prompt.py holds this to the text
    that template rendered."""
    parts = [
        prompt,
        "\n\n<session-context>\nTenant: ",
        turn.tenant,
    ]
    if turn.group:
        parts += ("\nGroup: ", turn.group)
    parts += (
        "\nProject: ",
        turn.project or "(none)",
        "\nUser: ",
        turn.user or "(unknown)",
        "\nDate: ",
        turn.date,
        " (UTC)",
    )
    if turn.language:
        parts += (
            "\nLanguage: answer in ",
            turn.language,
            " unless the user writes in another language.",
        )
    parts.append("\n</session-context>")
    if turn.memory:
        parts += (
            "\n\n<project-memory>\nWhat earlier work in this project recorded, most relevant "
            "to this turn first:\n",
            turn.memory,
            "\n</project-memory>",
        )
    if turn.rag:
        parts += (
            "\n\n<rag-context>\nPassages from the project's documents and the user's own that "
            "may bear on this turn; say which\nsource you use:\n",
            turn.rag,
            "\n</rag-context>",
        )
    return "".join(parts).strip()
