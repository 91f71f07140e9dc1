"""Recipe and manual validation: names, YAML, the document schema, engines, prompt templates."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

import yaml
from pydantic import ValidationError

from recipe_service.models import GENERATED_NAME_PATTERN, NAME_PATTERN, ModelSize, RecipeSpec
from recipe_service.prompts import TemplateProblem, render_context, render_template
from vance.domain import PROFILE_PATTERN
from vance.errors import InvalidArgumentError

MAX_DOCUMENT_CHARS = 256_000
MAX_MANUAL_CHARS = 512_000


def check_name(name: str, *, what: str = "recipe") -> str:
    if what == "recipe" and re.fullmatch(GENERATED_NAME_PATTERN, name or ""):
        return name
    if not re.fullmatch(NAME_PATTERN, name or ""):
        raise InvalidArgumentError(
            f"{what} name {name!r} must match {NAME_PATTERN}", reason=f"invalid_{what}_name"
        )
    return name


def check_scope(tenant: str, project: str) -> None:
    # ':' separates the parts of a store key; allowing it would let two scopes share keys.
    if not tenant:
        raise InvalidArgumentError("tenant_id is required", reason="tenant_required")
    if ":" in tenant or ":" in project:
        raise InvalidArgumentError("tenant and project ids cannot contain ':'")


def parse_yaml(name: str, text: str) -> dict[str, Any]:
    if len(text) > MAX_DOCUMENT_CHARS:
        raise _invalid(name, f"the document exceeds {MAX_DOCUMENT_CHARS} characters")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _invalid(name, f"not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise _invalid(name, "the document must be a YAML mapping")
    return doc


def integral_floats_to_ints(value: Any) -> Any:
    """google.protobuf.Struct carries every number as a double; a structured recipe would
    otherwise come back with `maxIterations: 12.0`."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: integral_floats_to_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [integral_floats_to_ints(v) for v in value]
    return value


def validate_document(name: str, doc: dict[str, Any], engines: Collection[str]) -> RecipeSpec:
    """Schema, engine, profile names, JSON-compatible params and renderable prompts.
    Raises InvalidArgumentError naming the recipe and the offending key."""
    try:
        spec = RecipeSpec.model_validate(doc)
    except ValidationError as exc:
        raise _invalid(name, _describe(exc)) from None
    if spec.engine not in engines:
        raise _invalid(
            name, f"engine {spec.engine!r} is not in the catalog ({', '.join(sorted(engines))})"
        )
    for profile in spec.profiles:
        if not re.fullmatch(PROFILE_PATTERN, profile):
            raise _invalid(name, f"profile {profile!r} must match {PROFILE_PATTERN}")
    try:
        # Params travel as google.protobuf.Struct; a YAML date or set would fail at apply time.
        json.dumps(spec.document(), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _invalid(name, f"params must be JSON-compatible: {exc}") from None
    _check_prompts(name, spec)
    return spec


def _check_prompts(name: str, spec: RecipeSpec) -> None:
    """Renders every prompt template once per profile block and model size with the recipe's
    own params, so syntax errors and sandbox violations surface on save, not at the spawn."""
    for profile in ["", *spec.profiles]:
        key, block = spec.block(profile)
        params = {**spec.params, **(block.params if block else {})}
        templates = [("promptPrefix", spec.prompt_prefix)]
        if block is not None:
            templates.append((f"profiles.{key}.promptPrefixAppend", block.prompt_prefix_append))
        for size in ModelSize:
            context = render_context(
                params=params,
                profile=profile or "default",
                profile_block=key,
                tenant="tenant",
                project="project",
                recipe=name,
                engine=spec.engine,
                model_size=size,
            )
            for where, template in templates:
                try:
                    render_template(template, context)
                except TemplateProblem as exc:
                    raise _invalid(name, f"{where}: {exc}") from None


def check_manual(name: str, content: str) -> None:
    check_name(name, what="manual")
    if not content.strip():
        raise InvalidArgumentError(f"manual {name!r} is empty", reason="invalid_manual")
    if len(content) > MAX_MANUAL_CHARS:
        raise InvalidArgumentError(
            f"manual {name!r} exceeds {MAX_MANUAL_CHARS} characters", reason="invalid_manual"
        )


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "document"
        message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def _invalid(name: str, detail: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"recipe {name!r} is invalid: {detail}", reason="invalid_recipe")
