"""The `how_do_i` tool: a ranked keyword search over the texts shipped with the system, the
bundled manuals (asked of recipe_service, which owns them: ListManuals with `bundled`, then
ReadManual) and the repository's docs (docs/*.md), so a model can look up a term it does not
know in the middle of a turn.

The texts are split into sections at their Markdown headings and read once, on the first
search that reads them all (they do not change while the services run). A section scores by how many of the
query's words it holds, rarer words counting more (inverse document frequency), a word in the
heading counting three times, and the score damped by the section's length (BM25's shape, in
a few lines: a few hundred sections need no index library). No network, no embeddings.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc

_ROOT = Path(__file__).resolve().parent.parent
# The docs are not a package, so an installed system names their folder with VANCE_DOCS_DIR
# (the Dockerfile copies them there).
SOURCES = (Path(os.environ.get("VANCE_DOCS_DIR") or _ROOT / "docs"),)

# (name, markdown) of each bundled manual.
ManualSource = Callable[[], Awaitable[list[tuple[str, str]]]]

MAX_RESULTS = 5
DEFAULT_RESULTS = 3
EXCERPT_CHARS = 1_500
_TITLE_WEIGHT = 3
_K1, _B = 1.2, 0.75

_HEADING = re.compile(r"^(#{1,4})\s+(.*\S)\s*$")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-.]*[a-z0-9]|[a-z0-9]")
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in into is it its me my of on or "
    "the this to what when where which who why with you your".split()
)


def words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def _stem(word: str) -> str:
    """A light suffix cut, so "spawning", "spawned" and "spawns" all find "spawn"."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Section:
    source: str  # e.g. "docs/protocol.md" or "manual:recipes"
    title: str  # the heading path, "Protocol > Frames"
    text: str
    counts: Counter[str]
    length: int


@dataclass(frozen=True)
class Hit:
    source: str
    title: str
    excerpt: str
    score: float


def split_sections(source: str, text: str) -> list[Section]:
    """One section per heading (the text before the first heading is a section of its own,
    titled after the document); the title is the heading path."""
    out: list[Section] = []
    path: list[str] = []
    title = source
    lines: list[str] = []

    def close() -> None:
        body = "\n".join(lines).strip()
        if body:
            counts = Counter(words(body))
            for w in words(title):
                counts[w] += _TITLE_WEIGHT
            out.append(Section(source, title, body, counts, sum(counts.values())))

    for line in text.splitlines():
        m = _HEADING.match(line)
        if m is None:
            lines.append(line)
            continue
        close()
        depth = len(m.group(1))
        path = [*path[: depth - 1], m.group(2)]
        title, lines = " > ".join(path), []
    close()
    return out


def bundled_manuals(recipes: recipe_pb2_grpc.RecipeServiceAsyncStub) -> ManualSource:
    """The bundled manuals as recipe_service serves them (a failed call raises: the next search
    asks again)."""

    async def read() -> list[tuple[str, str]]:
        listing = await recipes.ListManuals(rpb.ListManualsRequest(bundled=True), timeout=10)
        out = []
        for m in listing.manuals:
            manual = await recipes.ReadManual(rpb.ReadManualRequest(name=m.name), timeout=10)
            out.append((manual.name, manual.content))
        return out

    return read


class HowDoI:
    def __init__(
        self, sources: tuple[Path, ...] = SOURCES, *, manuals: ManualSource | None = None
    ) -> None:
        self._sources = sources
        self._manuals = manuals
        self._sections: list[Section] | None = None
        self._df: Counter[str] = Counter()
        self._avg = 1.0

    async def _load(self) -> list[Section]:
        if self._sections is None:
            sections: list[Section] = []
            if self._manuals is not None:
                for name, text in await self._manuals():
                    sections += split_sections(f"manual:{name}", text)
            for folder in self._sources:
                for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
                    label = f"{folder.name}/{path.name}"
                    sections += split_sections(label, path.read_text(encoding="utf-8"))
            for s in sections:
                self._df.update(s.counts.keys())
            self._avg = sum(s.length for s in sections) / len(sections) if sections else 1.0
            self._sections = sections
        return self._sections

    async def search(self, query: str, limit: int = DEFAULT_RESULTS) -> list[Hit]:
        sections = await self._load()
        terms = list(dict.fromkeys(words(query)))
        n = len(sections)
        scored: list[tuple[float, Section]] = []
        for s in sections:
            score = 0.0
            for t in terms:
                tf = s.counts.get(t, 0)
                if not tf:
                    continue
                idf = math.log(1 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5))
                score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * s.length / self._avg))
            if score > 0:
                scored.append((score, s))
        scored.sort(key=lambda x: -x[0])
        return [
            Hit(s.source, s.title, _excerpt(s.text), round(score, 3))
            for score, s in scored[: max(1, min(limit, MAX_RESULTS))]
        ]


def _excerpt(text: str) -> str:
    if len(text) <= EXCERPT_CHARS:
        return text
    return f"{text[:EXCERPT_CHARS]}... [cut: {len(text) - EXCERPT_CHARS} more characters]"
