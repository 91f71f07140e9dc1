"""The doc tools' arguments (validated once, by parse_args, with documents.py's checks) and
answers (records, JSON only in the tool host): process_service/user_work/host.py."""

from __future__ import annotations

from pydantic import ValidationInfo, field_validator

from process_service.tool_args import ToolArgs, ToolResult, reasoned
from process_service.user_work.documents import DocSummary, check_body, clean_path, line_number
from vance.json_types import JsonValue


def _path(value: JsonValue, *, allow_workspace: bool) -> str:
    return reasoned(lambda: clean_path(value, allow_workspace=allow_workspace))


class CreateArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("path", "body")

    path: str
    body: str
    title: str = ""

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: JsonValue) -> str:
        return _path(value, allow_workspace=False)

    @field_validator("body", mode="before")
    @classmethod
    def _body(cls, value: JsonValue) -> str:
        return reasoned(lambda: check_body(value))

    @field_validator("title", mode="before")
    @classmethod
    def _title(cls, value: JsonValue) -> str:
        return str(value or "")


class ReadArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("path",)

    path: str
    numbered: bool = False  # only a JSON true numbers the lines

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: JsonValue) -> str:
        return _path(value, allow_workspace=True)

    @field_validator("numbered", mode="before")
    @classmethod
    def _true(cls, value: JsonValue) -> bool:
        return value is True


class EditArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("path", "text")

    path: str
    text: str
    from_line: int | None = None
    to_line: int | None = None

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: JsonValue) -> str:
        return _path(value, allow_workspace=False)

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, value: JsonValue) -> str:
        return reasoned(lambda: check_body(value, "text"))

    @field_validator("from_line", "to_line", mode="before")
    @classmethod
    def _line(cls, value: JsonValue, info: ValidationInfo) -> int | None:
        name = "fromLine" if info.field_name == "from_line" else "toLine"
        return None if value is None else reasoned(lambda: line_number(value, name))


class ListArgs(ToolArgs):
    prefix: str = ""

    @field_validator("prefix", mode="before")
    @classmethod
    def _text(cls, value: JsonValue) -> str:
        return str(value or "")


class PurgeArgs(ToolArgs):
    """One document (`path`), else a folder (`prefix`); the prefix is not read beside a path."""

    path: str = ""
    prefix: str = ""

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: JsonValue) -> str:
        return _path(value, allow_workspace=False) if value else ""

    @field_validator("prefix", mode="before")
    @classmethod
    def _prefix(cls, value: JsonValue, info: ValidationInfo) -> str:
        if info.data.get("path") or not value:
            return ""
        return _path(value, allow_workspace=False)


class DocCreated(ToolResult):
    created: DocSummary


class DocRead(ToolResult):
    path: str
    title: str
    body: str
    lines: int
    source: str
    updated_at: int | None


class DocEdited(ToolResult):
    edited: DocSummary
    lines: int


class DocList(ToolResult):
    OMIT_NONE = frozenset({"note"})

    documents: list[DocSummary]
    note: str | None = None


class DocPurged(ToolResult):
    deleted: list[str]
