"""Markdown for the store calls per turn, and for the session search and lifecycle sweep
measurements (bench/search.py, bench/sweeps.py), which return plain dicts of figures."""

from __future__ import annotations

from typing import Any

from bench.markdown import table
from bench.scenarios import ThroughputResult


def search_section(r: dict[str, Any]) -> list[str]:
    lines = [
        f"## (e) Session search at {r['messages']:,} messages",
        "",
        f"{r['sessions']:,} sessions of 10 users, {r['postings']:,} distinct words, loaded into "
        f"the store in the index's shape in {r['seed_s']} s; then queries through "
        f"`SessionService.SearchSessions` ({r['through']}), 20 hits per page, one at a time. "
        "'user' searches one user's sessions, 'admin' all sessions of the tenant.",
        "",
    ]
    kinds = list(r["user"]["by_kind_p50_ms"])
    rows = [
        [
            scope,
            f"**{r[scope]['p50_ms']}**",
            f"**{r[scope]['p99_ms']}**",
            str(r[scope]["max_ms"]),
            str(r[scope]["mean_hits"]),
            *[f"{r[scope]['by_kind_p50_ms'][k]} / {r[scope]['by_kind_p99_ms'][k]}" for k in kinds],
        ]
        for scope in ("user", "admin")
    ]
    lines += table(
        ["scope", "p50 ms", "p99 ms", "max ms", "hits/query", *[f"{k} p50/p99" for k in kinds]],
        rows,
    )
    lines += [
        "",
        "Indexing cost per message (the indexer's path, a conversation alternating question "
        "and answer), with one message per chat feed page: "
        f"{r['index_per_message_ms']} ms, {r.get('index_cpu_per_message_ms', '?')} ms of the "
        f"indexer's CPU, {r.get('index_commands_per_message', '?')} store commands; with pages "
        f"of 32 messages over 8 sessions: {r.get('index_batched_per_message_ms', '?')} ms, "
        f"{r.get('index_batched_cpu_per_message_ms', '?')} ms of CPU, "
        f"{r.get('index_batched_commands_per_message', '?')} store commands.",
        "",
    ]
    return lines


def sweeps_section(r: dict[str, Any]) -> list[str]:
    lines = [
        f"## (f) Lifecycle sweep duration at {r['sessions']:,} sessions",
        "",
        f"{r['sessions']:,} open, bound, idle-sweepable sessions loaded in {r['seed_s']} s; each "
        f"round is one `SessionService.RunSweeps(now_ms)` over gRPC; {r['due_per_round']} "
        "sessions due per acting round.",
        "",
    ]
    names = {
        "quiet": "nothing due (steady state)",
        "idle_due": "1% idle: checked and suspended",
        "stale_binds": "1% stale binds released",
        "transitions": "1% suspended past transitionAt: archived (closed when abandoned)",
        "full_scan": "for comparison: one filter scan of `sessions`",
    }
    rows = [
        [label, f"**{r[k]['median_ms']}**", str(r[k]["max_ms"]), str(r[k]["runs"])]
        for k, label in names.items()
    ]
    lines += table(["round", "median ms", "max ms", "runs"], rows)
    acted = ", ".join(f"{k} {v}" for k, v in r["acted"].items())
    return [*lines, "", f"Acted on: {acted}.", ""]


def store_calls_section(r: ThroughputResult) -> list[str]:
    """Store commands per turn by process and by command and collection."""
    calls = r.cost_store_calls()
    if not calls:
        return []
    turns = max(1, r.cost_turns)
    by_process = {name: sum(c.values()) for name, c in calls.items() if sum(c.values()) > 0}
    lines = [
        f"### Store commands per turn ({r.workers} engine workers, the same window and drain)",
        "",
        "Counted by a PyMongo command listener in every process (`VANCE_STORE_TRACE`, "
        "vance/store_trace.py). One bulk write is one command.",
        "",
    ]
    rows = [
        [name, f"{n / turns:.2f}"] for name, n in sorted(by_process.items(), key=lambda kv: -kv[1])
    ]
    rows.append(["**total**", f"**{sum(by_process.values()) / turns:.2f}**"])
    lines += table(["process", "commands / turn"], rows)
    every: dict[str, int] = {}
    for name, counts in calls.items():
        for key, n in counts.items():
            if n > 0:
                every[f"{name}: {key}"] = n
    top = sorted(every.items(), key=lambda kv: -kv[1])[:20]
    lines += [
        "",
        *table(
            ["process: command collection", "per turn"], [[k, f"{n / turns:.2f}"] for k, n in top]
        ),
    ]
    return [*lines, ""]
