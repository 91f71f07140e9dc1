"""The how_do_i search (process_service/tools/how_do_i.py): its ranking on files, and the bundled
manuals read through recipe_service."""

from __future__ import annotations

from pathlib import Path

from process_service.tools.how_do_i import HowDoI, bundled_manuals, split_sections
from tests.harness import System
from vance.v1 import recipe_pb2_grpc


def test_sections_are_titled_by_their_heading_path() -> None:
    text = "intro words\n# Guide\nabout\n## Lanes\none turn at a time\n### Leases\nrenewed\n## Tools\nx"
    titles = [s.title for s in split_sections("docs/g.md", text)]
    assert titles == [
        "docs/g.md",
        "Guide",
        "Guide > Lanes",
        "Guide > Lanes > Leases",
        "Guide > Tools",
    ]


async def test_heading_words_and_rare_words_rank_first(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Spawning workers\nA worker is spawned by a tool.\n"
        "# Chat\nThe chat mentions workers and spawning once, among many other words here.\n"
        "# Unrelated\nNothing to see.\n",
        encoding="utf-8",
    )
    search = HowDoI((tmp_path,))
    hits = await search.search("how do I spawn a worker?", limit=5)
    assert [h.title for h in hits] == ["Spawning workers", "Chat"]
    assert hits[0].source == f"{tmp_path.name}/a.md"
    assert await search.search("zebra") == []


async def test_the_bundled_manuals_come_from_recipe_service(system: System) -> None:
    stub = recipe_pb2_grpc.RecipeServiceStub(system.channel("recipe_service"))
    search = HowDoI((), manuals=bundled_manuals(stub))
    hits = await search.search("which tool starts a worker process", limit=5)
    assert hits and hits[0].source == "manual:process-spawning"
    assert "process_create" in hits[0].excerpt
