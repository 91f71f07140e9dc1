"""What every process tool shares: the error a model can act on, argument models validated once
at the tool boundary, and result records turned into JSON only where the result is sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, ClassVar, TypeVar

import grpc
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

from vance.domain import ThinkProcess
from vance.json_types import JsonObject, JsonValue


class ToolError(Exception):
    pass


# ---- arguments ----

# Error types whose message the parser composes with the argument's name; any other custom
# error (ToolArgs validators) carries its whole sentence.
_REQUIRED, _NOT_STRING, _NOT_BOOL = "arg_required", "arg_not_string", "arg_not_bool"


def _text(value: object) -> str:
    if value is None or value == "":
        raise PydanticCustomError(_REQUIRED, "required")
    if not isinstance(value, str):
        raise PydanticCustomError(_NOT_STRING, "not a string")
    return value.strip()


def _optional_text(value: object) -> str:
    return "" if value is None or value == "" else _text(value)


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise PydanticCustomError(_NOT_BOOL, "not a boolean")
    return value


# A required string, stripped: missing, null and "" are all "'x' is required" (as arg_str).
Text = Annotated[str, BeforeValidator(_text)]
# An optional string, stripped; missing, null and "" are "".
OptText = Annotated[str, BeforeValidator(_optional_text)]
# A boolean that must be one (a default covers a missing argument).
Flag = Annotated[bool, BeforeValidator(_flag)]


def reason(message: str) -> PydanticCustomError:
    """A validator's whole error sentence, passed to the model as it is."""
    return PydanticCustomError("arg_reason", message)


T = TypeVar("T")


def reasoned(check: Callable[[], T]) -> T:
    """Runs a check that raises ToolError with its own sentence (the user's tools have their
    own wording, e.g. "'path' must be a non-empty text such as notes/todo.md") inside a
    ToolArgs validator: its sentence becomes the validation error parse_args reports. A field
    named in NULL_WHEN_ABSENT gets that sentence for a missing argument too."""
    try:
        return check()
    except ToolError as exc:
        raise reason(str(exc)) from None


class ToolArgs(BaseModel):
    """A tool's arguments. Fields are declared in the order they are checked, so the first
    error reported is the one of the earliest argument (as the sequential checks did);
    arguments a tool does not know are ignored, as the model may send extra ones."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore"
    )

    # Fields whose check runs on null when the argument is missing, for checks with their own
    # wording for it ("'text' must be a non-empty text") rather than "'text' is required".
    NULL_WHEN_ABSENT: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _absent_as_null(cls, data: object) -> object:
        if cls.NULL_WHEN_ABSENT and isinstance(data, dict):
            return {**{to_camel(f): None for f in cls.NULL_WHEN_ABSENT}, **data}
        return data


A = TypeVar("A", bound=ToolArgs)


def parse_args(model: type[A], args: Mapping[str, JsonValue]) -> A:
    """The model's arguments as `model`, or a ToolError naming the first bad argument."""
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        raise ToolError(_message(exc.errors()[0])) from None


def _message(error: ErrorDetails) -> str:
    name = ".".join(str(p) for p in error["loc"])
    match error["type"]:
        case "missing" | "arg_required":
            return f"'{name}' is required"
        case "arg_not_string" | "string_type":
            return f"'{name}' must be a string"
        case "arg_not_bool" | "bool_type" | "bool_parsing":
            return f"'{name}' must be true or false"
        case "arg_reason":
            return error["msg"]
        case "dict_type" | "model_type":
            return f"'{name}' must be an object"
        case "list_type":
            return f"'{name}' must be a list"
        case _:
            return f"'{name}': {error['msg']}"


def arg_str(args: Mapping[str, JsonValue], key: str, *, required: bool = True) -> str:
    value = args.get(key)
    if value is None or value == "":
        if required:
            raise ToolError(f"'{key}' is required")
        return ""
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string")
    return value.strip()


def rpc_details(exc: Exception) -> str:
    """The message of a failed gRPC call, or of any other exception."""
    if isinstance(exc, grpc.aio.AioRpcError):
        return str(exc.details() or exc.code().name)
    return str(exc)


# ---- results ----


class ToolResult(BaseModel):
    """A tool's answer as a record; `to_json` is the one place it becomes the JSON the model
    reads (camelCase keys). Fields named in OMIT_NONE are left out while None (a `note` shown
    only when there is something to say); every other None is sent as null."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset()

    def to_json(self) -> JsonObject:
        omit = {f for f in self.OMIT_NONE if getattr(self, f) is None}
        return self.model_dump(mode="json", by_alias=True, exclude=omit or None)


class JsonResult(ToolResult):
    """An answer already built as JSON (plans.py's plan view, which plan_rpcs.py also turns
    into the proto), passed on as it is."""

    body: JsonObject

    def to_json(self) -> JsonObject:
        return self.body


class SpawnResult(ToolResult):
    """What process_create answers (and process_create_delegate passes on as `process`)."""

    name: str
    status: str
    engine: str
    recipe: str

    @classmethod
    def of(cls, child: ThinkProcess) -> SpawnResult:
        return cls(
            name=child.name,
            status=child.status.value,
            engine=child.engine,
            recipe=child.recipe_name,
        )
