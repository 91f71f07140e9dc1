"""Arthur's system prompt (engine_worker/engines/arthur_prompt.py) is put together without a
template engine; it must read exactly as the jinja template it replaced rendered it, for every
combination of the optional blocks (group, language, project memory, RAG passages) and of the
empty values that read "(none)" and "(unknown)"."""

from __future__ import annotations

import itertools

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from engine_worker.engines.arthur_prompt import TurnContext, render

# The template as the prompt was rendered before (kept here as the specification of the text).
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


def test_the_prompt_reads_as_the_template_rendered_it() -> None:
    combos = itertools.product(
        ["You are Arthur.", "  Padded prompt\n", ""],
        ["acme", ""],
        ["", "research"],
        ["", "demo"],
        ["", "alice"],
        ["", "German"],
        ["", "- note: the build is green\n- a second line"],
        ["", '<chunk source="a.md" title="A" score="0.90">\ntext\n</chunk>'],
    )
    for prompt, tenant, group, project, user, language, memory, rag in combos:
        turn = TurnContext(
            tenant, group, project, user, "2026-12-02 Wednesday", language, memory, rag
        )
        expected = _TEMPLATE.render(
            prompt=prompt,
            tenant=tenant,
            group=group,
            project=project,
            user=user,
            date=turn.date,
            language=language,
            memory=memory,
            rag=rag,
        ).strip()
        assert render(prompt, turn) == expected
