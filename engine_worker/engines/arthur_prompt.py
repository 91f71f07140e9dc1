"""Arthur's system prompt, rendered for every turn: the recipe's prompt (rendered once at spawn
by recipe_service), then where and when the turn happens (tenant, project, user, date, the chat
language) and a bounded summary of the project's memory. Rendering it per turn makes a changed
setting or language, the date and new project memory count from the next turn on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from engine_worker.context import ThinkEngineContext

MEMORY_SUMMARY_CHARS = 2_000

_TEMPLATE = SandboxedEnvironment(autoescape=False, undefined=StrictUndefined).from_string(
    """{{ prompt }}

<session-context>
Tenant: {{ tenant }}
Project: {{ project or "(none)" }}
User: {{ user or "(unknown)" }}
Date: {{ date }} (UTC)
{%- if language %}
Language: answer in {{ language }} unless the user writes in another language.
{%- endif %}
</session-context>
{%- if memory %}

<project-memory>
What earlier work in this project recorded, newest first:
{{ memory }}
</project-memory>
{%- endif %}"""
)


@dataclass(frozen=True)
class TurnContext:
    tenant: str
    project: str
    user: str
    date: str
    language: str
    memory: str


async def turn_context(
    ctx: ThinkEngineContext, *, include_memory: bool, language: str
) -> TurnContext:
    memory = await ctx.memory().project_summary(MEMORY_SUMMARY_CHARS) if include_memory else ""
    return TurnContext(
        tenant=ctx.scope.tenant_id,
        project=ctx.scope.project_id,
        user=ctx.user,
        date=datetime.now(UTC).strftime("%Y-%m-%d %A"),
        language=language,
        memory=memory,
    )


def render(prompt: str, turn: TurnContext) -> str:
    return _TEMPLATE.render(
        prompt=prompt,
        tenant=turn.tenant,
        project=turn.project,
        user=turn.user,
        date=turn.date,
        language=turn.language,
        memory=turn.memory,
    ).strip()
