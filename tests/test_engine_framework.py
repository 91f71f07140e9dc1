"""The engine framework's rules that need no running system."""

from __future__ import annotations

import pytest

from engine_worker.engine import DuplicateEngineError, EngineRegistry, compatible
from engine_worker.engines import default_engines
from engine_worker.engines.arthur import Arthur
from engine_worker.engines.loop import Answer, _respond_args
from vance import convert as c
from vance import domain as d


def test_two_engines_with_one_name_fail_at_start_up() -> None:
    with pytest.raises(DuplicateEngineError, match="arthur"):
        EngineRegistry([*default_engines(), Arthur()])


def test_versions_are_compatible_within_a_major() -> None:
    assert compatible("1.4.2", "1.0.0")
    assert compatible("", "2.0.0")  # not started yet: any version
    assert not compatible("0.9.0", "1.0.0")
    assert not compatible("2.0.0", "1.9.9")
    with pytest.raises(ValueError, match="SemVer"):
        compatible("banana", "1.0.0")


@pytest.mark.parametrize(
    "message",
    [
        d.UserChatInput(content="hi", from_user="dev"),
        d.ProcessEvent(
            source_process_id="p1",
            type=d.ProcessEventType.BLOCKED,
            human_summary="May I?",
            payload={"k": [1, 2]},
        ),
        d.Reply(in_reply_to="m1", content="yes"),
        d.ToolResult(
            tool_call_id="c1",
            tool_name="t",
            status=d.ToolCallStatus.TIMEOUT,
            result={"partial": True},
            error="slow",
        ),
        d.ExternalCommand(command="approve", params={"target": "w"}),
        d.InboxAnswer(inbox_item_id="i1", answer="B"),
        d.PeerEvent(
            source_session_id="s2",
            user_id="u1",
            type=d.PeerEventType.PROJECT_CREATED,
            human_summary="created the project x",
            payload={"n": 1},
        ),
    ],
)
def test_every_steer_variant_survives_the_wire(message: d.SteerMessage) -> None:
    message.idempotency_key = "k1"
    message.at_ms = 42
    assert c.steer_from_proto(c.steer_to_proto(message)) == message
    assert d.steer_from_dict(message.model_dump(mode="json")) == message


def test_a_steer_message_without_a_variant_is_refused() -> None:
    from vance.v1 import common_pb2 as pb

    with pytest.raises(ValueError, match="no variant"):
        c.steer_from_proto(pb.SteerMessage(id="x"))


def test_respond_arguments_are_checked() -> None:
    assert _respond_args({}) == "respond needs a non-empty 'message'"
    assert _respond_args({"message": "ok", "awaiting_user_input": "yes"}) == (
        "'awaiting_user_input' must be true or false"
    )
    assert _respond_args({"message": "ok", "options": [{"label": "A"}]}) == (
        "'options' must list 2 to 4 choices"
    )
    answer = _respond_args({"message": "Pick", "options": [{"label": "A"}, {"label": "B"}]})
    assert isinstance(answer, Answer) and answer.awaiting_user_input
    text, meta = answer.rendered()
    assert text == "Pick\n\n1. **A**\n2. **B**" and meta == {
        "options": [{"label": "A"}, {"label": "B"}]
    }
