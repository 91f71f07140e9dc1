"""Arthur's system prompt, rendered for every turn: the recipe's prompt (rendered once at spawn
by recipe_service), then where and when the turn happens (tenant, group, project, user, date,
the chat language), the project's memory most relevant to the turn, and with RAG auto-inject
the best passages of the project's documents (engines/knowledge_turn.py). Rendering it per turn
makes a changed setting or language, the date and new project memory count from the next turn
on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from engine_worker.context import ThinkEngineContext
from engine_worker.engines.knowledge_turn import project_memory, rag_context

_TEMPLATE = SandboxedEnvironment(autoescape=False, undefined=StrictUndefined).from_string(
    """{{ prompt }}

<session-context>
Tenant: {{ tenant }}
{%- if group %}
Group: {{ group }}
{%- endif %}
Project: {{ project or "(none)" }}
User: {{ user or "(unknown)" }}
Date: {{ date }} (UTC)
{%- if language %}
Language: answer in {{ language }} unless the user writes in another language.
{%- endif %}
</session-context>
{%- if memory %}

<project-memory>
What earlier work in this project recorded, most relevant to this turn first:
{{ memory }}
</project-memory>
{%- endif %}
{%- if rag %}

<rag-context>
Passages from the project's documents and the user's own that may bear on this turn; say which
source you use:
{{ rag }}
</rag-context>
{%- endif %}"""
)


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
        date=datetime.now(UTC).strftime("%Y-%m-%d %A"),
        language=language,
        memory=memory,
        rag=await rag_context(ctx, rag_query),
    )


def render(prompt: str, turn: TurnContext) -> str:
    return _TEMPLATE.render(
        prompt=prompt,
        tenant=turn.tenant,
        group=turn.group,
        project=turn.project,
        user=turn.user,
        date=turn.date,
        language=turn.language,
        memory=turn.memory,
        rag=turn.rag,
    ).strip()
