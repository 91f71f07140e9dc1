"""What a turn adds from memory and RAG (seed 000 §3.8 items 3 and 4), and the notes engines
keep of their children's results:

- `project_memory`: the project's records most relevant to the turn's input, within the
  setting `arthur.memoryTokens` (process_service/knowledge/recall.py ranks them);
- `rag_context`: with `rag.autoInject` on (a recipe parameter wins over the setting, which
  `rag.autoInject.enabled` also turns on), the best chunks scoring at least `rag.minScore`,
  with their sources; skipped silently when there is no user text, no match or an error;
- `note_finished_children`: a compact note of each finished child in project memory, so a
  later session of the project knows what was done.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from engine_worker.context import ThinkEngineContext
from engine_worker.memory import PROJECT
from vance.domain import ProcessEvent, ProcessEventType, SteerMessage, UserChatInput

logger = logging.getLogger(__name__)

MEMORY_TOKENS = "arthur.memoryTokens"
DEFAULT_MEMORY_TOKENS = 500
AUTO_INJECT = "rag.autoInject"
AUTO_INJECT_ENABLED = "rag.autoInject.enabled"
MIN_SCORE = "rag.minScore"
TOP_K = "rag.topK"
DEFAULT_MIN_SCORE = 0.2
DEFAULT_TOP_K = 3
NOTE_CHARS = 500
QUERY_CHARS = 2_000
_FINISHED = (ProcessEventType.DONE, ProcessEventType.FAILED)


def user_text(inbox: Sequence[SteerMessage]) -> str:
    """What the user said this turn: the query memory and RAG rank by."""
    said = " ".join(m.content for m in inbox if isinstance(m, UserChatInput))
    return said[:QUERY_CHARS]


def turn_query(inbox: Sequence[SteerMessage]) -> str:
    """The user's words and the finished work this turn reacts to."""
    parts = [m.content for m in inbox if isinstance(m, UserChatInput)]
    parts += [m.human_summary for m in inbox if isinstance(m, ProcessEvent)]
    return " ".join(parts)[:QUERY_CHARS]


async def project_memory(ctx: ThinkEngineContext, query: str) -> str:
    """The block's lines, best first; "" when the project has none."""
    memory = ctx.memory()
    if not await memory.newest(PROJECT, 1):
        return ""  # the hand-over brought the project's newest: none at all, no recall call
    tokens = await ctx.settings_api().get_int(MEMORY_TOKENS, DEFAULT_MEMORY_TOKENS)
    lines = []
    for entry in await memory.recall("PROJECT", query, limit=20, max_chars=tokens * 4):
        text = " ".join(entry.content.split())
        lines.append(f"- {entry.title}: {text}" if entry.title else f"- {text}")
    return "\n".join(lines)


async def auto_inject(ctx: ThinkEngineContext) -> bool:
    recipe = ctx.settings.get(AUTO_INJECT)
    if recipe is not None:
        return str(recipe).strip().lower() in ("true", "on", "1", "yes")
    settings = ctx.settings_api()
    return await settings.get_bool(AUTO_INJECT, False) or await settings.get_bool(
        AUTO_INJECT_ENABLED, False
    )


async def rag_context(ctx: ThinkEngineContext, query: str) -> str:
    if not query.strip() or not await auto_inject(ctx):
        return ""
    settings = ctx.settings_api()
    try:
        min_score = float(await settings.get_str(MIN_SCORE, str(DEFAULT_MIN_SCORE)))
        top_k = await settings.get_int(TOP_K, DEFAULT_TOP_K)
        passages = await ctx.memory().rag_query(query, top_k, min_score)
    except Exception:
        logger.warning("rag auto-inject skipped for %s", ctx.scope.process_id, exc_info=True)
        return ""
    return "\n\n".join(
        f'<chunk source="{p.source}" title="{p.title}" score="{p.score:.2f}">\n{p.text}\n</chunk>'
        for p in passages
    )


async def note_finished_children(ctx: ThinkEngineContext, inbox: Sequence[SteerMessage]) -> None:
    for m in inbox:
        if not isinstance(m, ProcessEvent) or m.type not in _FINISHED:
            continue
        name = m.source_process_name or m.source_process_id
        summary = " ".join(m.human_summary.split())
        if len(summary) > NOTE_CHARS:
            summary = summary[:NOTE_CHARS] + "…"
        verb = "finished" if m.type is ProcessEventType.DONE else "failed"
        await ctx.memory().record(
            PROJECT,
            f"{name} {verb}: {summary or '(no summary)'}",
            kind="child-result",
            title=f"result of {name}",
        )
