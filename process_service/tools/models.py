"""The process tools' arguments (validated once, by parse_args) and answers (records, JSON only
in the tool host): process_service/tools/process_tools.py."""

from __future__ import annotations

from pydantic import Field, field_validator

from process_service.tool_args import OptText, Text, ToolArgs, ToolResult, reason
from process_service.tools.how_do_i import DEFAULT_RESULTS, MAX_RESULTS
from vance.domain import ThinkProcess
from vance.json_types import JsonObject, JsonValue

# ---- arguments ----


class NamedArgs(ToolArgs):
    name: Text


class SteerArgs(ToolArgs):
    name: Text
    content: Text


class ListArgs(ToolArgs):
    include_terminated: bool = False  # any truthy value, as the model may send 1 or "yes"

    @field_validator("include_terminated", mode="before")
    @classmethod
    def _truthy(cls, value: JsonValue) -> bool:
        return bool(value)


class SpawnArgs(ToolArgs):
    name: Text
    goal: Text
    recipe: OptText = ""
    engine: OptText = ""
    params: JsonObject = Field(default_factory=dict)  # recipe parameters, free-form JSON
    title: OptText = ""
    steer_content: OptText = ""

    @field_validator("params", mode="before")
    @classmethod
    def _object(cls, value: JsonValue) -> JsonValue:
        if not value:
            return {}
        if not isinstance(value, dict):
            raise reason("'params' must be an object")
        return value


class HowDoIArgs(ToolArgs):
    question: Text
    limit: int = DEFAULT_RESULTS

    @field_validator("limit", mode="before")
    @classmethod
    def _range(cls, value: JsonValue) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_RESULTS:
            raise reason(f"'limit' must be a whole number from 1 to {MAX_RESULTS}")
        return value


# ---- results ----


class ProcessSummary(ToolResult):
    name: str
    status: str
    engine: str
    recipe: str | None
    goal: str
    close_reason: str | None

    @classmethod
    def of(cls, p: ThinkProcess) -> ProcessSummary:
        return cls(
            name=p.name,
            status=p.status.value,
            engine=p.engine,
            recipe=p.recipe_name or None,
            goal=p.goal,
            close_reason=p.close_reason.value if p.close_reason else None,
        )


class ProcessList(ToolResult):
    processes: list[ProcessSummary]


class Steered(ToolResult):
    ok: bool
    outcome: str
    name: str


class Stopped(ToolResult):
    name: str
    status: str
    close_reason: str | None


class Paused(ToolResult):
    name: str
    status: str


class RecipeEntry(ToolResult):
    name: str
    description: str
    engine: str
    source: str
    tags: list[str]


class RecipeList(ToolResult):
    recipes: list[RecipeEntry]


class RecipeDescribed(ToolResult):
    name: str
    engine: str
    source: str
    document: JsonObject  # the recipe document as stored: free-form YAML turned JSON


class ManualEntry(ToolResult):
    name: str
    title: str
    size: int


class ManualList(ToolResult):
    manuals: list[ManualEntry]
    missing: list[str]


class Manual(ToolResult):
    name: str
    title: str
    content: str


class Section(ToolResult):
    source: str
    title: str
    text: str


class HowDoIAnswer(ToolResult):
    OMIT_NONE = frozenset({"note"})

    question: str
    sections: list[Section]
    note: str | None = None
