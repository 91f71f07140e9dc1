"""Recipes and manuals shipped inside the package, loaded and validated once at start."""

from __future__ import annotations

from collections.abc import Collection
from importlib import resources

from recipe_service.models import Manual, Recipe, RecipeSource
from recipe_service.validation import check_name, parse_yaml, validate_document


def load_bundled_recipes(engines: Collection[str]) -> dict[str, Recipe]:
    """Every recipes/*.yaml, validated like a stored recipe: a broken bundled recipe stops the
    service at start rather than failing a spawn later."""
    out: dict[str, Recipe] = {}
    for entry in resources.files("recipe_service").joinpath("recipes").iterdir():
        if not entry.name.endswith(".yaml"):
            continue
        name = check_name(entry.name.removesuffix(".yaml"))
        text = entry.read_text()
        spec = validate_document(name, parse_yaml(name, text), engines)
        out[name] = Recipe(name=name, spec=spec, source=RecipeSource.BUNDLED, text=text)
    return out


def load_bundled_manuals() -> dict[str, Manual]:
    out: dict[str, Manual] = {}
    for entry in resources.files("recipe_service").joinpath("manuals").iterdir():
        if not entry.name.endswith(".md"):
            continue
        name = check_name(entry.name.removesuffix(".md"), what="manual")
        out[name] = Manual(name=name, content=entry.read_text(), source=RecipeSource.BUNDLED)
    return out
