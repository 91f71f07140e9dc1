"""vance/protoutil.py reads Structs field by field; it must give exactly what protobuf's own
json_format gives, for every shape of data a chat message, an event or a tool result carries."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from vance.protoutil import dict_to_struct, from_value, struct_to_dict, to_value

_CHARS = 'ab \u00e9\n"{}\U0001f642'


def _data(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["str", "int", "float", "bool", "none"] + (["dict", "list"] if depth < 4 else [])
    match rng.choice(kinds):
        case "str":
            return "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 6)))
        case "int":
            return rng.randint(-(2**60), 2**60)
        case "float":
            return rng.uniform(-1e9, 1e9)
        case "bool":
            return rng.random() < 0.5
        case "none":
            return None
        case "dict":
            return {f"k{i}{rng.random()}": _data(rng, depth + 1) for i in range(rng.randint(0, 4))}
        case _:
            return [_data(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text: 4 and 4.0 differ here, as they do for a client."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_struct_to_dict_and_from_value_agree_with_json_format() -> None:
    rng = random.Random(20261201)
    for _ in range(2_000):
        data = {f"f{i}": _data(rng) for i in range(rng.randint(0, 5))}
        s = dict_to_struct(data)
        assert _same(struct_to_dict(s), json_format.MessageToDict(s))
        v = to_value(_data(rng))
        assert _same(from_value(v), json_format.MessageToDict(v))
    assert struct_to_dict(None) == {} and from_value(struct_pb2.Value()) is None


def test_a_number_that_is_not_json_is_refused_as_json_format_refuses_it() -> None:
    s = struct_pb2.Struct()
    s.fields["x"].number_value = float("inf")
    with pytest.raises(ValueError):
        json_format.MessageToDict(s)
    with pytest.raises(ValueError):
        struct_to_dict(s)
