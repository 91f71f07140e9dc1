"""Markdown tables for the benchmark report (bench/report.py, bench/report_lifecycle.py)."""

from __future__ import annotations


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]
