"""CPU time and memory of processes, read from /proc (Linux only, no extra dependency)."""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = float(os.sysconf("SC_CLK_TCK"))


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, from field 3 (state) on."""
    try:
        # os.read, not Path.read_text: a third of the cost, and a snapshot reads every process.
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            text = os.read(fd, 4096).decode()
        finally:
            os.close(fd)
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a process (all its threads), or None when it is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    # utime and stime are fields 14 and 15 of the file: indexes 11 and 12 here.
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _children() -> dict[int, list[int]]:
    """Every live process's children, by parent pid: one pass over /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is None:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(root: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """Every live process below root (children, grandchildren, ...)."""
    children = _children() if children is None else children
    out: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and of everything it started that still runs."""
    return sum(cpu_seconds(p) or 0.0 for p in [pid, *descendants(pid)])


def trees_cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """`tree_cpu_seconds` of each process, from one pass over /proc: on a shared machine /proc
    holds hundreds of processes, and a pass per process cost the bench ~150 ms of its own CPU
    per snapshot, inside the windows whose CPU the real-pace round charges to its client."""
    children = _children()
    return {
        name: sum(cpu_seconds(p) or 0.0 for p in [pid, *descendants(pid, children)])
        for name, pid in pids.items()
    }


def rss_bytes(pid: int) -> int | None:
    """Resident set size (VmRSS) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def machine_busy_seconds() -> float:
    """CPU time the whole machine spent busy (all cores), from the first line of /proc/stat."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / _TICKS


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
