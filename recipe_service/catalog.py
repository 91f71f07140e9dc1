"""The engine catalog ({purpose, when_to_use, not_for} per engine), bundled and reloadable."""

from __future__ import annotations

import logging
from collections.abc import Collection
from importlib import resources
from pathlib import Path

import yaml

from recipe_service.models import EngineInfo

logger = logging.getLogger(__name__)

CATALOG_FILE = ("catalog", "engines.yaml")
UNAVAILABLE_NOTE = "(no engine worker runs it now: recipes on it cannot be spawned)"


def parse_catalog(text: str) -> list[EngineInfo]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"the engine catalog is not valid YAML: {exc}") from None
    engines = doc.get("engines") if isinstance(doc, dict) else None
    if not isinstance(engines, dict) or not engines:
        raise ValueError("the engine catalog needs a non-empty `engines` mapping")
    out = []
    for name, entry in engines.items():
        if not isinstance(entry, dict):
            raise ValueError(f"engine {name!r}: expected a mapping")
        missing = [k for k in ("purpose", "when_to_use", "not_for") if not entry.get(k)]
        if missing:
            raise ValueError(f"engine {name!r} lacks {', '.join(missing)}")
        out.append(
            EngineInfo(
                name=str(name),
                purpose=str(entry["purpose"]).strip(),
                when_to_use=str(entry["when_to_use"]).strip(),
                not_for=str(entry["not_for"]).strip(),
            )
        )
    return sorted(out, key=lambda e: e.name)


def read_bundled_catalog() -> str:
    return resources.files("recipe_service").joinpath(*CATALOG_FILE).read_text()


class EngineCatalog:
    def __init__(self, engines: list[EngineInfo], *, path: str = "") -> None:
        self._engines = engines
        # The file reload() re-reads; empty: the bundled resource.
        self._path = path

    @classmethod
    def bundled(cls) -> EngineCatalog:
        return cls(parse_catalog(read_bundled_catalog()))

    @classmethod
    def load(cls, path: str = "") -> EngineCatalog:
        """The catalog from `path` (the deployment's `recipes.catalog_path`), else bundled."""
        return cls(parse_catalog(_read(path)), path=path)

    def engines(self) -> list[EngineInfo]:
        return list(self._engines)

    def names(self) -> set[str]:
        return {e.name for e in self._engines}

    def reload(self, text: str | None = None) -> list[EngineInfo]:
        """Re-reads the catalog. A broken file raises and the old entries stay active; the
        swap is one assignment, so readers see the old list or the new one, never a mix.
        Reloading an unchanged file changes nothing, so the call is idempotent."""
        fresh = parse_catalog(_read(self._path) if text is None else text)
        self._engines = fresh
        logger.info("engine catalog reloaded: %d engines", len(fresh))
        return list(fresh)

    def markdown(self, available: Collection[str] | None = None) -> str:
        """The catalog as the recipe selector's prompt embeds it. With `available` (the
        engines some worker runs), the others are still listed but marked."""
        lines = []
        for e in self._engines:
            mark = f" {UNAVAILABLE_NOTE}" if available and e.name not in available else ""
            lines.append(f"- **{e.name}**{mark}: {e.purpose}")
            lines.append(f"  - when to use: {e.when_to_use}")
            lines.append(f"  - not for: {e.not_for}")
        return "\n".join(lines)


def _read(path: str) -> str:
    return Path(path).read_text() if path else read_bundled_catalog()
