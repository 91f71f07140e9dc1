"""The process tools' argument models and answer records (process_service/tool_args.py): what
the model reads back for a bad argument, and the JSON an answer becomes in the tool host. The
tools' own tests (test_tools.py, test_user_work.py, test_eddie_*.py) call them end to end."""

from __future__ import annotations

import pytest

from process_service.hub.peers import NotifyArgs
from process_service.knowledge.tools import RememberArgs
from process_service.tool_args import ToolArgs, ToolError, parse_args
from process_service.tools.models import HowDoIAnswer, ProcessSummary, SpawnArgs
from process_service.user_work.doc_models import CreateArgs, EditArgs, PurgeArgs
from process_service.user_work.notes import RemoveArgs
from vance.json_types import JsonObject


def _error(model: type[ToolArgs], args: JsonObject) -> str:
    with pytest.raises(ToolError) as caught:
        parse_args(model, args)
    return str(caught.value)


def test_a_bad_argument_is_named_as_before() -> None:
    assert _error(SpawnArgs, {}) == "'name' is required"
    assert _error(SpawnArgs, {"name": "", "goal": "g"}) == "'name' is required"
    assert _error(SpawnArgs, {"name": "w", "goal": 3}) == "'goal' must be a string"
    assert _error(SpawnArgs, {"name": "w", "goal": "g", "params": [1]}) == (
        "'params' must be an object"
    )
    # Several bad arguments: the first one declared is reported, as the checks in turn did.
    assert _error(SpawnArgs, {"name": 1, "goal": 2}) == "'name' must be a string"


def test_arguments_are_read_once_into_typed_fields() -> None:
    spawn = parse_args(
        SpawnArgs, {"name": " w ", "goal": "g", "steerContent": "go", "params": None, "x": 1}
    )
    assert (spawn.name, spawn.goal, spawn.steer_content, spawn.params) == ("w", "g", "go", {})
    edit = parse_args(EditArgs, {"path": "/notes/a.md/", "text": "x", "fromLine": 2.0})
    assert (edit.path, edit.from_line, edit.to_line) == ("notes/a.md", 2, None)
    assert parse_args(NotifyArgs, {"type": "project_created", "summary": "s"}).type == (
        "PROJECT_CREATED"
    )


def test_the_user_tools_keep_their_own_wording() -> None:
    assert _error(CreateArgs, {}) == "'path' must be a non-empty text such as notes/todo.md"
    assert _error(CreateArgs, {"path": "a.md"}) == "'body' must be text"
    assert _error(CreateArgs, {"path": "workspace/a.md", "body": ""}) == (
        "workspace/ holds the files your scripts write; pick another path"
    )
    assert _error(EditArgs, {"path": "a.md", "text": "x", "fromLine": 0}) == (
        "'fromLine' must be a whole number from 1 to 10000000"
    )
    assert _error(RememberArgs, {"text": "x"}) == "scope must be process, session or project"
    assert _error(NotifyArgs, {"type": "nope", "summary": "s"}).startswith(
        "type must be one of PROJECT_CREATED"
    )
    # A fact named by its id needs no parts; without one, every part is checked.
    assert parse_args(RemoveArgs, {"id": "f1"}).id == "f1"
    assert _error(RemoveArgs, {"subject": "a"}) == "'relation' must be a non-empty text"
    # A purge by path does not read the prefix beside it.
    assert parse_args(PurgeArgs, {"path": "a.md", "prefix": ".."}).prefix == ""


def test_an_answer_becomes_json_with_camel_case_keys() -> None:
    summary = ProcessSummary(
        name="w", status="IDLE", engine="ford", recipe=None, goal="g", close_reason=None
    )
    assert summary.to_json() == {
        "name": "w",
        "status": "IDLE",
        "engine": "ford",
        "recipe": None,
        "goal": "g",
        "closeReason": None,
    }
    # A note is sent only when there is something to say.
    assert HowDoIAnswer(question="q", sections=[]).to_json() == {"question": "q", "sections": []}
    assert HowDoIAnswer(question="q", sections=[], note="nothing").to_json()["note"] == "nothing"
