"""apply_defaulting: a resolved recipe plus profile and caller input -> the spawn's snapshot."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from recipe_service.models import AppliedRecipe, ModelSize, PromptMode, Recipe
from recipe_service.prompts import TemplateProblem, model_size_for, render_context, render_template
from vance.errors import InvalidArgumentError


def apply_defaulting(
    recipe: Recipe,
    *,
    base: Recipe | None,
    tenant: str,
    project: str,
    profile: str,
    caller_params: dict[str, Any],
    model_size: ModelSize | None = None,
) -> AppliedRecipe:
    """Merges params (recipe, then profile block, then caller unless `locked`), renders the
    prompt and collects the tool pool changes.

    `base` is the recipe named after the engine (the engine's own prompt); with promptMode
    APPEND its prompt comes first, with OVERWRITE it is left out."""
    spec = recipe.spec
    profile = profile or "default"
    block_key, block = spec.block(profile)

    # Deep copies: the recipe may be a cached bundled one, and nested values (lists of
    # manual paths) must not be shared with the snapshot.
    params = copy.deepcopy(spec.params)
    if block is not None:
        params.update(copy.deepcopy(block.params))
    ignored: list[str] = []
    if spec.locked:
        ignored = sorted(caller_params)
    else:
        params.update(copy.deepcopy(caller_params))

    size = model_size_for(params, model_size)
    context = render_context(
        params=params,
        profile=profile,
        profile_block=block_key,
        tenant=tenant,
        project=project,
        recipe=recipe.name,
        engine=spec.engine,
        model_size=size,
    )
    parts = []
    if spec.prompt_mode is PromptMode.APPEND and base is not None and base.name != recipe.name:
        parts.append(_render(base, "promptPrefix", base.spec.prompt_prefix, context))
    parts.append(_render(recipe, "promptPrefix", spec.prompt_prefix, context))
    if block is not None:
        where = f"profiles.{block_key}.promptPrefixAppend"
        parts.append(_render(recipe, where, block.prompt_prefix_append, context))

    tools_add, tools_remove = _tool_changes(
        spec.allowed_tools_add,
        spec.allowed_tools_remove,
        block.allowed_tools_add if block else [],
        block.allowed_tools_remove if block else [],
    )
    return AppliedRecipe(
        recipe=recipe,
        profile=profile,
        profile_block=block_key,
        model_size=size,
        params=params,
        prompt="\n\n".join(p for p in parts if p),
        prompt_mode=spec.prompt_mode,
        tools_add=tools_add,
        tools_remove=tools_remove,
        ignored_caller_params=ignored,
    )


def _render(recipe: Recipe, where: str, template: str, context: dict[str, Any]) -> str:
    try:
        return render_template(template, context)
    except TemplateProblem as exc:
        raise InvalidArgumentError(
            f"recipe {recipe.name!r} ({recipe.source.value.lower()}) {where}: {exc}",
            reason="template_unsafe" if exc.unsafe else "template_error",
        ) from None


def _tool_changes(
    recipe_add: list[str],
    recipe_remove: list[str],
    block_add: list[str],
    block_remove: list[str],
) -> tuple[list[str], list[str]]:
    """The profile block is the more specific voice: what it adds is no longer removed by the
    recipe, and what it removes is no longer added."""
    add = _unique([*(t for t in recipe_add if t not in block_remove), *block_add])
    remove = _unique([*(t for t in recipe_remove if t not in block_add), *block_remove])
    return add, remove


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
