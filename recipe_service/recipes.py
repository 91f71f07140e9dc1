"""Bundled recipes and their application to a spawn (parameter merge, profile block, prompt)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from vance.errors import InvalidArgumentError, NotFoundError

BUNDLED = "BUNDLED"


@dataclass(frozen=True)
class Recipe:
    name: str
    document: dict[str, Any]
    source: str = BUNDLED

    @property
    def engine(self) -> str:
        return str(self.document["engine"])

    @property
    def description(self) -> str:
        return str(self.document.get("description", ""))

    @property
    def tags(self) -> list[str]:
        return [str(t) for t in self.document.get("tags") or []]


@dataclass(frozen=True)
class Applied:
    recipe: Recipe
    params: dict[str, Any]
    prompt: str
    tools_add: list[str] = field(default_factory=list)
    tools_remove: list[str] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        """What a process keeps: later recipe edits do not change a running process."""
        return {
            "recipe": self.recipe.name,
            "source": self.recipe.source,
            "engine": self.recipe.engine,
            "prompt": self.prompt,
            "params": self.params,
            "allowedToolsAdd": self.tools_add,
            "allowedToolsRemove": self.tools_remove,
        }


def load_bundled() -> dict[str, Recipe]:
    out: dict[str, Recipe] = {}
    for entry in resources.files("recipe_service").joinpath("recipes").iterdir():
        if not entry.name.endswith(".yaml"):
            continue
        doc = yaml.safe_load(entry.read_text())
        name = entry.name.removesuffix(".yaml")
        if not isinstance(doc, dict) or "engine" not in doc or "description" not in doc:
            raise ValueError(f"bundled recipe {name} needs engine and description")
        out[name] = Recipe(name, doc)
    return out


class RecipeBook:
    def __init__(self, bundled: dict[str, Recipe]) -> None:
        self._bundled = bundled

    def list(self) -> list[Recipe]:
        return [self._bundled[n] for n in sorted(self._bundled)]

    def get(self, name: str) -> Recipe:
        recipe = self._bundled.get(name)
        if recipe is None:
            raise NotFoundError(f"no recipe {name!r}", reason="recipe_not_found")
        return recipe

    def apply(
        self, *, recipe: str, engine: str, profile: str, caller_params: dict[str, Any]
    ) -> Applied:
        name = recipe or engine
        if not name:
            raise InvalidArgumentError("name a recipe or an engine", reason="recipe_required")
        r = self.get(name)
        doc = r.document
        params = dict(doc.get("params") or {})
        block = (
            (doc.get("profiles") or {}).get(profile)
            or (doc.get("profiles") or {}).get("default")
            or {}
        )
        params.update(block.get("params") or {})
        if not doc.get("locked"):
            params.update(caller_params)
        prompt = str(doc.get("promptPrefix") or "")
        if block.get("promptPrefixAppend"):
            prompt = f"{prompt}\n{block['promptPrefixAppend']}"
        return Applied(
            recipe=r,
            params=params,
            prompt=prompt,
            tools_add=[*(doc.get("allowedToolsAdd") or []), *(block.get("allowedToolsAdd") or [])],
            tools_remove=[
                *(doc.get("allowedToolsRemove") or []),
                *(block.get("allowedToolsRemove") or []),
            ],
        )
