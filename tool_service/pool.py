"""The tool pool of a process: engine tools, changed by the recipe, pruned by the profile."""

from __future__ import annotations

import fnmatch
from typing import Any

Spec = dict[str, Any]


def _matches(spec: Spec, pattern: str) -> bool:
    if pattern.startswith("@"):
        return pattern in (spec.get("labels") or [])
    return fnmatch.fnmatchcase(str(spec["_id"]), pattern)


def select(registry: list[Spec], patterns: list[str]) -> set[str]:
    """Names of the registered tools that any of the patterns (name, glob, @label) selects."""
    return {str(s["_id"]) for s in registry for p in patterns if _matches(s, p)}


def resolve_pool(
    registry: list[Spec],
    *,
    engine_tools: list[str],
    add: list[str],
    remove: list[str],
    profile: str,
) -> list[Spec]:
    """A tool the profile may not use is not in the pool at all: the model never sees it."""
    names = (select(registry, engine_tools) | select(registry, add)) - select(registry, remove)
    out = []
    for spec in registry:
        if spec["_id"] not in names:
            continue
        allowed = spec.get("allowed_profiles") or []
        if allowed and profile not in allowed:
            continue
        out.append(spec)
    out.sort(key=lambda s: str(s["_id"]))
    return out
