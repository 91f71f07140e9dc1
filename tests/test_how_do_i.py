"""The how_do_i search's rules that need no running system (process_service/how_do_i.py)."""

from __future__ import annotations

from pathlib import Path

from process_service.how_do_i import HowDoI, split_sections


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


def test_heading_words_and_rare_words_rank_first(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Spawning workers\nA worker is spawned by a tool.\n"
        "# Chat\nThe chat mentions workers and spawning once, among many other words here.\n"
        "# Unrelated\nNothing to see.\n",
        encoding="utf-8",
    )
    search = HowDoI((tmp_path,))
    hits = search.search("how do I spawn a worker?", limit=5)
    assert [h.title for h in hits] == ["Spawning workers", "Chat"]
    assert hits[0].source == f"{tmp_path.name}/a.md"
    assert search.search("zebra") == []
