"""Input limits, checked before any handler runs (docs/protocol.md, "Limits").

`parse_json` is the only way a WebSocket frame or a REST body becomes Python data in the
gateway: it refuses `NaN`/`Infinity`, nesting deeper than MAX_DEPTH (without recursing, so a
frame nested thousands deep cannot raise RecursionError anywhere later), more than MAX_NODES
values, strings that are not valid Unicode (lone UTF-16 surrogates, which json accepts as
`\\ud800` escapes but protobuf and UTF-8 cannot carry) and integers outside int64 (no proto
field is wider; a free-form `params` value becomes a double). Field-specific ranges are the
declared models' job (gateway/inputs.py)."""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from gateway.errors import GatewayError

# The server refuses (close 1009) frames above this before reading them whole (uvicorn
# `ws_max_size`); between MAX_FRAME_BYTES and it the gateway answers an error frame.
WS_MAX_BYTES = 1024 * 1024
MAX_FRAME_BYTES = 256 * 1024
MAX_BODY_BYTES = 256 * 1024
MAX_REQUEST_HEAD_BYTES = 256 * 1024  # request line and headers (h11's default is 16 KiB)
MAX_DEPTH = 32
MAX_NODES = 10_000
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
MAX_ID_CHARS = 256


def _refuse_constant(name: str) -> NoReturn:
    raise GatewayError(400, f"{name} is not a JSON number", "bad_number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise GatewayError(400, f"{text[:40]} is out of range for a JSON number", "bad_number")
    return value


# Made once: json.loads with these hooks builds a decoder per call (several times the cost of
# parsing a small frame).
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def parse_json(raw: str | bytes, *, limit: int, what: str = "frame") -> Any:
    """Parses and checks one JSON document; any violation is a 400 GatewayError whose reason
    names the top-level field (`bad_<field>`, or `bad_<what>` when the whole input is wrong)."""
    value = load_json(raw, limit=limit, what=what)
    check_tree(value, what=what)
    return value


def load_json(raw: str | bytes, *, limit: int, what: str = "frame") -> Any:
    """Size and syntax only (no NaN/Infinity, no overflowing numbers); `check_tree` does the
    rest."""
    if len(raw) > limit:
        raise GatewayError(
            400,
            f"the {what} has {len(raw)} bytes; at most {limit} are allowed",
            f"{what}_too_large",
        )
    try:
        if isinstance(raw, bytes):  # as json.loads reads bytes
            raw = raw.decode(json.detect_encoding(raw), "surrogatepass")
        value = _DECODER.decode(raw)
    except GatewayError:
        raise
    except RecursionError as exc:
        raise GatewayError(400, f"the {what} is nested too deeply", f"bad_{what}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        # JSONDecodeError, invalid UTF-8, an integer with more digits than Python converts.
        raise GatewayError(400, f"not a JSON {what}: {exc}", f"bad_{what}") from exc
    return value


def _label(part: str | int) -> str:
    """A path part as it may appear in a reason or message: keys that are long or not valid
    Unicode themselves are shown as `?`."""
    if isinstance(part, int):
        return str(part)
    if len(part) > 64 or not part.isprintable() or not _valid(part):
        return "?"
    return part


def _fail(path: list[str | int], what: str, problem: str) -> NoReturn:
    field = ".".join(_label(p) for p in path[: MAX_DEPTH + 1])
    # A frame's fields live under `data`: the reason names the field, not the envelope.
    named = path[1:] if what == "frame" and path[:1] == ["data"] and len(path) > 1 else path
    top = next((_label(p) for p in named if isinstance(p, str)), what)
    top = what if top == "?" else top
    raise GatewayError(400, f"{field or what}: {problem}", f"bad_{top}", field=field)


def check_tree(value: Any, *, what: str = "frame") -> None:
    """Iterative walk of parsed JSON: depth, size, Unicode and integer range (see the module)."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    nodes = 0
    while stack:
        item, path = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            _fail([], what, f"more than {MAX_NODES} values")
        if len(path) > MAX_DEPTH:
            _fail(path, what, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            _check_text(item, path, what)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not INT64_MIN <= item <= INT64_MAX:
                _fail(path, what, "integer outside the 64-bit range")
        elif isinstance(item, float):
            continue  # finite: parse_constant and _finite_float refuse the rest
        elif isinstance(item, dict):
            for key, sub in item.items():
                if not _valid(key):
                    _fail(path, what, "a key is not valid Unicode (a lone surrogate)")
                stack.append((sub, [*path, key]))
        elif isinstance(item, list):
            for i, sub in enumerate(item):
                stack.append((sub, [*path, i]))


def _valid(s: str) -> bool:
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_text(s: str, path: list[str | int], what: str) -> None:
    if not _valid(s):
        _fail(path, what, "not valid Unicode (a lone surrogate)")
