"""Hostile input for the gateway tests: the classes of bad frames and bodies a client can send,
a seeded mutator of valid frames, and the gateway's memory as the OS sees it."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from tests.harness import System

DEEP = 500  # deeper than any limit, shallow enough for json.dumps
SURROGATE = "\\ud800"  # a lone surrogate, as a JSON escape (Python's json accepts it)


def raw_frame(type_: str, data_json: str, fid: str = "h") -> str:
    """A frame whose data is given as JSON text, so it can hold what json.dumps never writes."""
    return f'{{"id": "{fid}", "type": "{type_}", "data": {data_json}}}'


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


# (what, raw frame text, expected reason or None for "any reason")
HOSTILE_FRAMES: list[tuple[str, str, str | None]] = [
    ("not json", "{not json", "bad_frame"),
    ("not an object", "[1, 2]", "bad_frame"),
    ("type not a string", '{"id": "x", "type": 7, "data": {}}', "bad_frame"),
    ("data not an object", '{"id": "x", "type": "ping", "data": []}', "bad_frame"),
    ("surrogate in content", raw_frame("process-steer", f'{{"content": "a{SURROGATE}"}}'), "bad_content"),
    ("surrogate in a name", raw_frame("process-messages", f'{{"processName": "{SURROGATE}"}}'), "bad_processName"),
    ("surrogate in the id", f'{{"id": "{SURROGATE}", "type": "ping", "data": {{}}}}', "bad_id"),
    ("surrogate in the type", f'{{"id": "x", "type": "p{SURROGATE}", "data": {{}}}}', "bad_type"),
    ("surrogate in a key", raw_frame("process-command", f'{{"params": {{"{SURROGATE}": 1}}}}'), "bad_params"),
    ("limit beyond int32", raw_frame("process-messages", f'{{"limit": {2**31}}}'), "bad_limit"),
    ("negative limit", raw_frame("process-messages", '{"limit": -1}'), "bad_limit"),
    ("sinceSeq beyond int64", raw_frame("session-resume", f'{{"sessionId": "s", "sinceSeq": {2**63}}}'), "bad_sinceSeq"),
    ("huge lifecycle value", raw_frame("session-create", f'{{"projectId": "demo", "lifecycle": {{"idleTimeoutMs": {10**30}}}}}'), "bad_lifecycle"),
    ("huge params value", raw_frame("process-command", f'{{"command": "x", "params": {{"n": {10**30}}}}}'), "bad_params"),
    ("a 5000-digit integer", raw_frame("ping", f'{{"clientTimestamp": {"9" * 5000}}}'), "bad_frame"),
    ("boolean as limit", raw_frame("process-messages", '{"limit": true}'), "bad_limit"),
    ("boolean as sinceSeq", raw_frame("session-resume", '{"sessionId": "s", "sinceSeq": true}'), "bad_sinceSeq"),
    ("boolean as lifecycle value", raw_frame("session-create", '{"projectId": "demo", "lifecycle": {"idleTimeoutMs": true}}'), "bad_lifecycle"),
    ("integer as boolean", raw_frame("process-list", '{"includeTerminated": 1}'), "bad_includeTerminated"),
    ("nested hundreds deep", raw_frame("ping", f'{{"clientTimestamp": {nested(DEEP)}}}'), "bad_clientTimestamp"),
    ("nested a hundred thousand deep", raw_frame("ping", f'{{"clientTimestamp": {nested(100_000)}}}'), "bad_frame"),
    ("params deeper than protobuf", raw_frame("process-command", f'{{"command": "x", "params": {{"a": {nested(120)}}}}}'), "bad_params"),
    ("NaN", raw_frame("ping", '{"clientTimestamp": NaN}'), "bad_number"),
    ("Infinity", raw_frame("ping", '{"clientTimestamp": Infinity}'), "bad_number"),
    ("-Infinity", raw_frame("ping", '{"clientTimestamp": -Infinity}'), "bad_number"),
    ("an overflowing float", raw_frame("ping", '{"clientTimestamp": 1e999}'), "bad_number"),
    ("a 100 KB id", raw_frame("session-resume", json.dumps({"sessionId": "s" * 100_000})), "bad_sessionId"),
    ("too many values", raw_frame("ping", json.dumps({"clientTimestamp": [0] * 20_000})), "bad_frame"),
]  # fmt: skip


# Valid frames the mutator starts from: none of them starts a model turn or ends the socket.
def base_frames(session_id: str) -> list[dict[str, Any]]:
    return [
        {"type": "ping", "data": {"clientTimestamp": 1}},
        {"type": "process-list", "data": {"includeTerminated": True}},
        {"type": "process-messages", "data": {"processName": "chat", "limit": 2}},
        {"type": "session-resume", "data": {"sessionId": session_id, "sinceSeq": 10**9}},
        {
            "type": "process-command",
            "data": {
                "processId": "proc_nobody",
                "processName": "nobody",
                "command": "probe",
                "params": {"a": [1, {"b": "c"}], "n": 2.5},
            },
        },
        {"type": "process-pause", "data": {"processId": "proc_nobody", "processName": "nobody"}},
        {"type": "process-resume", "data": {"processId": "proc_nobody", "processName": "nobody"}},
        {
            "type": "process-steer",
            "data": {"processId": "proc_nobody", "processName": "nobody", "content": "x"},
        },
    ]


HOSTILE_VALUES: list[str] = [
    f'"{SURROGATE}"',
    f'"ok{SURROGATE}ok"',
    "true",
    "false",
    "null",
    "NaN",
    "-Infinity",
    "1e999",
    str(2**63),
    str(-(2**63) - 1),
    str(2**31),
    "-1",
    "3.5",
    '"' + "x" * 5000 + '"',
    "[]",
    "{}",
    nested(60),
    '{"a": ' * 40 + "1" + "}" * 40,
    '"\\u0000"',
    '"\\udfff\\ud800"',
]


class Mutator:
    """Seeded mutations of valid frames, as raw text: a field's value replaced by a hostile
    one, a field dropped or added, the type or envelope damaged, the text cut or corrupted."""

    def __init__(self, seed: int, session_id: str) -> None:
        self.rng = random.Random(seed)
        self.bases = base_frames(session_id)

    def frame(self, fid: str) -> str | bytes:
        base = self.rng.choice(self.bases)
        data = dict(base["data"])
        kind = self.rng.randrange(10)
        type_json = json.dumps(base["type"])
        if kind == 0:
            return json.dumps({"id": fid, "type": base["type"], "data": data}).encode()
        data_text = {k: json.dumps(v) for k, v in data.items()}
        if kind <= 4 and data_text:
            key = self.rng.choice(sorted(data_text))
            data_text[key] = self.rng.choice(HOSTILE_VALUES)
        elif kind == 5 and data_text:
            # Drop one field, never the one that keeps a command away from the chat process.
            droppable = [k for k in data_text if k not in ("processName", "processId")]
            if droppable:
                del data_text[self.rng.choice(droppable)]
        elif kind == 6:
            data_text[self.rng.choice(["zz", "limit", "sinceSeq", "takeover"])] = self.rng.choice(
                HOSTILE_VALUES
            )
        elif kind == 7:
            type_json = self.rng.choice([*HOSTILE_VALUES, '"no-such-frame"', '"auth"'])
        body = ", ".join(f"{json.dumps(k)}: {v}" for k, v in data_text.items())
        text = f'{{"id": "{fid}", "type": {type_json}, "data": {{{body}}}}}'
        if kind == 8:
            cut = self.rng.randrange(1, len(text))
            text = text[:cut]
        elif kind == 9:
            pos = self.rng.randrange(len(text))
            text = (
                text[:pos] + self.rng.choice(["\\", '"', "{", "]", "\x00", "\\ud800"]) + text[pos:]
            )
        return text


def gateway_rss_kb(system: System) -> int:
    proc = system.supervisor.children["gateway"].proc
    assert proc is not None
    status = Path(f"/proc/{proc.pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    assert match, status
    return int(match.group(1))


JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def logged_tokens(system: System) -> list[str]:
    """Every JWT found in the log files the harness writes for the services."""
    logs = system.supervisor.log_to
    assert logs is not None
    found: list[str] = []
    for path in sorted(Path(logs).glob("*.log")):
        found += JWT.findall(path.read_text(errors="replace"))
    return found
