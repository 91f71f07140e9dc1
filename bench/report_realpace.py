"""Round (i)'s section: the system at a hosted model's pace beside the LangGraph peer."""

from __future__ import annotations

from bench.hubturn import HubTurnResult
from bench.markdown import table
from bench.peer import PeerResult
from bench.realpace import RealPaceResult, rss_slope
from bench.scenarios import server_cpu
from bench.stats import Summary


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def realpace_section(
    runs: dict[int, RealPaceResult],
    peers: dict[int, PeerResult],
    zero: dict[int, RealPaceResult] | None = None,
    zero_rate: dict[int, RealPaceResult] | None = None,
) -> list[str]:
    first = next(iter(runs.values()))
    lines = [
        "## (i) Real pace: a hosted model's latency, the shipped defaults",
        "",
        f"The scripted model answers each call after {first.ttft_ms} ms to the first chunk and "
        f"{first.stream_ms} ms of streaming, through `respond` with its message in pieces; "
        "every client chats in its own session, one turn after the other; the measured window "
        "opens once every client has had its first answer of the load and a warm-up has "
        "passed (each session's first turn, which does work done once per session, ran "
        "before the load). The system runs as "
        "`make run` ships it (2 engine workers, default slots and leases). Ceiling: clients / "
        "the model's own time. Chunk lag: from the model sending the first piece of text a user "
        "reads (the first piece reaching into `respond`'s message) to the client reading its "
        "first chunk frame. RSS per turn in flight, all growth: the servers' peak RSS under "
        "load over their RSS with the same sessions open and idle (each had its first turn "
        "before, 20 started a second), divided by the turns in "
        "flight (what an idle session holds is listed under the table); it charges to the turns "
        "in flight whatever grows with the load at all (the store's Go heap goal follows the "
        "command rate, caches fill as turns are done, allocators keep freed heap). RSS per "
        "added turn in flight: the slope, how much more that growth is in a run with more "
        "turns in flight, per turn more; against the zero-latency run at the same turn rate "
        "when it ran (the same rate, turns done and sessions, almost nothing in flight), else "
        "against the run with fewer clients. What both runs grow alike drops out, so this is "
        "what a turn in flight holds. Server CPU per turn: the "
        "window and the drain until the servers are idle, with the sockets still open (their "
        "close afterwards is session work and listed under the table).",
        "",
    ]
    rows = []
    for clients, r in sorted(runs.items()):
        slope = _slope(clients, runs, zero_rate)
        lat = Summary.of(r.latencies)
        lag = Summary.of(r.chunk_lags)
        frames = sorted(r.chunk_frames)
        rows.append(
            [
                f"ours, {clients} clients ({r.slots} slots)",
                f"{r.turns_per_s:.1f}",
                f"{r.ceiling:.0f}",
                _pct(r.turns_per_s, r.ceiling),
                f"{lat.p50_ms:.0f} / {lat.p99_ms:.0f}",
                f"{lat.p50_ms - 1000 * r.model_s:.0f}",
                f"{lag.p50_ms:.1f} / {lag.p99_ms:.1f}",
                f"{frames[len(frames) // 2] if frames else 0} (min {frames[0] if frames else 0})",
                f"{r.server_cpu_ms_per_turn():.1f}",
                f"{r.rss_per_in_flight() / 1024:.0f} KiB",
                f"{sum(slope[1].values()) / 1024:.0f} KiB ({slope[0]})" if slope else "n/a",
            ]
        )
    for clients, ran in sorted(peers.items()):
        if ran.skipped:
            rows.append([f"LangGraph, {clients} clients", ran.skipped, *[""] * 9])
            continue
        f = ran.figures
        model_s = first.model_s
        rows.append(
            [
                f"LangGraph, {clients} clients (run limit {clients})",
                f"{ran.turns_per_s:.1f}",
                f"{clients / model_s:.0f}",
                _pct(ran.turns_per_s, clients / model_s),
                f"{float(f.get('p50_ms') or 0):.0f} / {float(f.get('p99_ms') or 0):.0f}",
                f"{float(f.get('p50_ms') or 0) - 1000 * model_s:.0f}",
                "n/a",
                "n/a",
                f"{ran.cpu_ms_per_turn:.1f}",
                "n/a",
                "n/a",
            ]
        )
    lines += table(
        [
            "run",
            "turns/s",
            "ceiling",
            "of ceiling",
            "turn p50 / p99 ms",
            "p50 above the model ms",
            "chunk lag p50 / p99 ms",
            "chunk frames per answer (median)",
            "server CPU ms per turn",
            "RSS per turn in flight, all growth",
            "RSS per added turn in flight",
        ],
        rows,
    )
    for clients, r in sorted(runs.items()):
        peer = peers.get(clients)
        if peer is not None and peer.turns_per_s:
            lines.append(
                f"- {clients} clients: **{r.turns_per_s / peer.turns_per_s:.2f}x** LangGraph's "
                f"turns/s, at {r.server_cpu_ms_per_turn() / peer.cpu_ms_per_turn:.2f}x its CPU "
                "per turn."
            )
        same = (zero or {}).get(clients)
        if same is not None:
            lines.append(
                f"- {clients} clients: the same load and script with a zero-latency model: "
                f"{same.turns_per_s:.1f} turns/s, {same.server_cpu_ms_per_turn():.1f} ms server "
                f"CPU per turn; at real pace **{r.server_cpu_ms_per_turn() / max(1e-9, same.server_cpu_ms_per_turn()):.2f}x** that."
            )
            zero_by = ", ".join(
                f"{k} {v:.2f}" for k, v in same.cpu_ms_per_turn_by_process().items()
            )
            lines.append(
                f"- {clients} clients, zero-latency model: server CPU ms per turn by process: "
                f"{zero_by}."
            )
        paced = (zero_rate or {}).get(clients)
        if paced is not None:
            paced_by = ", ".join(
                f"{k} {v:.2f}" for k, v in paced.cpu_ms_per_turn_by_process().items()
            )
            lines.append(
                f"- {clients} clients: the zero-latency model at the real pace's turn rate (each "
                f"client starting a turn every {paced.every_s * 1000:.0f} ms, what a turn took "
                f"here on average): {paced.turns_per_s:.1f} turns/s, {paced.server_cpu_ms_per_turn():.1f} ms "
                f"server CPU per turn; at real pace **"
                f"{r.server_cpu_ms_per_turn() / max(1e-9, paced.server_cpu_ms_per_turn()):.2f}x** "
                f"that (the same rate, {r.in_flight:.0f} against {paced.in_flight:.1f} turns in "
                f"flight: what a turn costs per second in flight). By process: {paced_by}."
            )
            lines += _memory_lines(
                f"{clients} clients, zero-latency model at that rate", paced, None
            )
        lines.append(f"- {clients} clients: outcomes {dict(sorted(r.outcomes.items()))}.")
        by_process = ", ".join(f"{k} {v:.2f}" for k, v in r.cpu_ms_per_turn_by_process().items())
        lines.append(f"- {clients} clients: server CPU ms per turn by process: {by_process}.")
        lines.append(
            f"- {clients} clients: load generators (not in the server figures): scripted model "
            f"{r.model_cpu_ms_per_call():.2f} ms per call ({r.model_calls} calls), bench client "
            f"{r.client_cpu_ms_per_turn():.2f} ms per turn."
        )
        lines += _memory_lines(f"{clients} clients", r, _slope(clients, runs, zero_rate))
        if r.rss_open:
            lines.append(
                f"- {clients} clients: an open, idle session (socket, bind, subscription) holds "
                f"{r.rss_per_session() / 1024:.0f} KiB of server RSS; a turn in flight "
                f"{r.rss_per_in_flight() / 1024:.0f} KiB over that, all growth "
                f"({r.in_flight:.0f} turns in flight on average)."
            )
        if r.close_cpu:
            lines.append(
                f"- {clients} clients: closing the {clients} sockets afterwards (not in the "
                f"per-turn figures): {1000 * server_cpu(r.close_cpu):.0f} ms server CPU in all."
            )
        calls = r.store_calls_per_turn()
        top = ", ".join(f"{k} {v:.2f}" for k, v in list(calls.items())[:12])
        lines.append(
            f"- {clients} clients: store commands per turn {sum(calls.values()):.2f}; most: {top}."
        )
        if same is not None:
            zcalls = same.store_calls_per_turn()
            ztop = ", ".join(f"{k} {v:.2f}" for k, v in list(zcalls.items())[:6])
            lines.append(
                f"- {clients} clients, zero-latency model: store commands per turn "
                f"{sum(zcalls.values()):.2f}; most: {ztop}."
            )
    return [*lines, ""]


def _slope(
    clients: int, runs: dict[int, RealPaceResult], zero_rate: dict[int, RealPaceResult] | None
) -> tuple[str, dict[str, float]] | None:
    """What a run's growth is measured against for `rss_slope`, named, and the slope: the
    zero-latency run at its turn rate, else the real-pace run with the most clients below."""
    more = runs[clients]
    candidates = []
    same_rate = (zero_rate or {}).get(clients)
    if same_rate is not None:
        candidates.append((f"vs the same rate, {same_rate.in_flight:.0f} in flight", same_rate))
    fewer = [c for c in runs if c < clients]
    if fewer:
        candidates.append((f"vs {max(fewer)} clients", runs[max(fewer)]))
    for against, run in candidates:
        slope = rss_slope(run, more)
        if slope:
            return against, slope
    return None


def _memory_lines(
    run: str, r: RealPaceResult, slope: tuple[str, dict[str, float]] | None
) -> list[str]:
    """RSS by process: before the sessions, with them open and idle, the peak under load,
    after it; and per added turn in flight."""
    base = r.rss_open or r.rss_idle

    def mib(v: int | None) -> str:
        return "-" if v is None else f"{v / 2**20:.1f}"

    by = ", ".join(
        f"{k} {mib(r.rss_idle.get(k))} / {mib(base.get(k))} / {mib(v)} ({g / 2**20:+.1f}, "
        f"{g / 1024 / max(1.0, r.in_flight):.0f} KiB per turn in flight) / "
        f"{mib(r.rss_after.get(k))}"
        for (k, v), g in zip(sorted(r.rss_busy.items()), r.rss_grown().values(), strict=True)
    )
    lines = [
        f"- {run}: RSS by process, MiB: before the sessions / with the sessions "
        "open and idle / the peak under load (its growth over the sessions open and idle, per "
        "turn in flight) / after the load (every turn done, the sessions still open: what the "
        f"load left held with no turn in flight): {by}."
    ]
    if slope is not None:
        against, per = slope
        each = ", ".join(f"{k} {v / 1024:+.0f}" for k, v in per.items())
        lines.append(
            f"- {run}: RSS per added turn in flight ({against}): "
            f"**{sum(per.values()) / 1024:.0f} KiB**; by process, KiB: {each}."
        )
    return lines


def hubturn_section(h: HubTurnResult) -> list[str]:
    lat = Summary.of(h.latencies)
    calls = h.store_calls_per_turn()
    top = ", ".join(f"{k} {v:.2f}" for k, v in list(calls.items())[:10])
    return [
        "## (j) A hub turn with one tool call",
        "",
        f"{h.clients} clients, each in a hub session of its own (Eddie), one ask after the other "
        "for 15 s; the scripted model (zero latency) answers each ask in two calls: "
        "`scratchpad_read` (the user's own work, served by process_service), then `answer`.",
        "",
        *table(
            [
                "hub turns/s",
                "turn p50 / p99 ms",
                "server CPU ms per hub turn",
                "store commands per hub turn",
            ],
            [
                [
                    f"{h.turns_per_s:.1f}",
                    f"{lat.p50_ms:.1f} / {lat.p99_ms:.1f}",
                    f"{h.server_cpu_ms_per_turn():.1f}",
                    f"{sum(calls.values()):.2f}",
                ]
            ],
        ),
        f"- store commands per hub turn, most: {top}.",
        "- of them, what the user's hubs knowing each other adds (activity log, peer read, "
        "hub registry): "
        + ", ".join(f"{k} {v:.2f}" for k, v in h.peer_work_per_turn().items())
        + ".",
        "",
    ]


def zeropace_lines(zero: dict[int, RealPaceResult]) -> list[str]:
    """The zero-latency runs alone, when their real-pace runs were not in the sitting."""
    lines = ["## (i) Zero latency, the shipped defaults (no real-pace run beside it)", ""]
    for clients, z in sorted(zero.items()):
        by = ", ".join(f"{k} {v:.2f}" for k, v in z.cpu_ms_per_turn_by_process().items())
        lines.append(
            f"- {clients} clients, zero-latency model: {z.turns_per_s:.1f} turns/s, "
            f"{z.server_cpu_ms_per_turn():.1f} ms server CPU per turn; by process: {by}."
        )
    return [*lines, ""]
