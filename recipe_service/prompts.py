"""Prompt templates: Jinja2 in a sandbox, rendered once at spawn into the process snapshot.

The render context, the same for `promptPrefix` and `profiles.<p>.promptPrefixAppend`:

- `params`: the merged parameters (recipe, profile block, caller), e.g. `{{ params.maxIterations }}`
- `profile`: the caller's profile (`foot`, `web`, ...); `profile_block`: the block applied
  (the profile, `default`, or empty)
- `tenant`, `project`: ids of the spawn's scope (`project` may be empty)
- `recipe`, `engine`: the recipe name and its engine
- `model`: `{size, spec}`; `model_size`: `SMALL` or `LARGE` (so tiers can get shorter prompts)

Unknown names (and attributes of them) render as empty text. Touching internals (`''.__class__`) fails at once.
"""

from __future__ import annotations

from typing import Any

from jinja2 import ChainableUndefined
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from recipe_service.models import ModelSize


class TemplateProblem(Exception):
    """A template that cannot be rendered; `unsafe` when the sandbox refused it."""

    def __init__(self, message: str, *, unsafe: bool = False) -> None:
        super().__init__(message)
        self.unsafe = unsafe


class _StrictSandbox(SandboxedEnvironment):
    """Jinja's sandbox answers an unsafe attribute with an undefined value that prints as
    empty text, so `{{ ''.__class__ }}` would pass unnoticed; raise instead."""

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe"
        )


# ChainableUndefined: `{{ params.rag.topK }}` is empty when the recipe sets no `rag`, rather
# than an error at spawn time for a parameter that is optional by nature.
_ENV = _StrictSandbox(autoescape=False, undefined=ChainableUndefined)


def render_context(
    *,
    params: dict[str, Any],
    profile: str,
    profile_block: str,
    tenant: str,
    project: str,
    recipe: str,
    engine: str,
    model_size: ModelSize,
) -> dict[str, Any]:
    return {
        "params": params,
        "profile": profile,
        "profile_block": profile_block,
        "tenant": tenant,
        "project": project,
        "recipe": recipe,
        "engine": engine,
        "model": {"size": model_size.value, "spec": str(params.get("model") or "")},
        "model_size": model_size.value,
    }


def render_template(template: str, context: dict[str, Any]) -> str:
    if not template:
        return ""
    try:
        return _ENV.from_string(template).render(context).strip()
    except SecurityError as exc:
        raise TemplateProblem(f"template is not allowed: {exc}", unsafe=True) from None
    except TemplateError as exc:
        raise TemplateProblem(f"template error: {exc}") from None
    except (ArithmeticError, TypeError, ValueError, LookupError) as exc:
        # The sandbox caps ranges with OverflowError; user expressions can raise the rest.
        raise TemplateProblem(f"template failed: {type(exc).__name__}: {exc}") from None


def model_size_for(params: dict[str, Any], requested: ModelSize | None) -> ModelSize:
    """The caller's size, else `params.modelSize`, else the tier: only `*:fast` is SMALL."""
    if requested is not None:
        return requested
    explicit = str(params.get("modelSize") or "").upper()
    if explicit in ModelSize.__members__:
        return ModelSize(explicit)
    spec = str(params.get("model") or "")
    first = spec.split(",")[0].strip()
    return ModelSize.SMALL if first.endswith(":fast") else ModelSize.LARGE
