"""Frames the server pushes (docs/protocol.md "Pushed frames"), each a typed model.

`parse_frame` turns one JSON object into the model of its `type`; a type this SDK does not know
(a newer server's frame) becomes an `UnknownFrame` holding the raw data, never an exception."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from vance_client.models import ChatMessage, InboxItem, Model


class Frame(BaseModel):
    """The envelope: `id`, `replyTo`, `type`, `data` and, on session events, `seq`."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")
    TYPE: ClassVar[str] = ""

    id: str = ""
    reply_to: str | None = Field(default=None, alias="replyTo")
    type: str
    seq: int | None = None
    data: Any = None
    # Which session the client had bound when the frame arrived (not on the wire): the
    # protocol names the session only in some frames' data, the client knows it for all.
    _session_id: str | None = PrivateAttr(default=None)

    @property
    def session_id(self) -> str | None:
        return self._session_id


class ServerInfo(Model):
    version: str = ""
    protocol_version: int = 0
    ping_interval: int = 30


class WelcomeData(Model):
    user_id: str = ""
    tenant_id: str = ""
    editor_id: str | None = None
    profile: str = "default"
    server: ServerInfo = Field(default_factory=ServerInfo)


class Welcome(Frame):
    TYPE = "welcome"
    data: WelcomeData


class ChatMessageAppended(Frame):
    TYPE = "chat-message-appended"
    data: ChatMessage


class StreamChunkData(Model):
    think_process_id: str = ""
    process_name: str = ""
    role: str = "assistant"
    chunk: str = ""


class ChatMessageStreamChunk(Frame):
    TYPE = "chat-message-stream-chunk"
    data: StreamChunkData


class ForwardedBy(Model):
    engine: str = ""
    process_id: str = ""
    via_session: str = ""


class ProcessProgressData(Model):
    process_id: str = ""
    process_name: str = ""
    engine: str = ""
    session_id: str = ""
    parent_process_id: str | None = None
    kind: str = ""  # STATUS, METRICS, PLAN, REPLY
    status: str | None = None  # STATUS changes only
    previous_status: str | None = None
    close_reason: str | None = None
    # Why it closed, in words (CLOSED); on the IDLE/PAUSED that ends a chat's turn that failed
    # for good, why the turn failed (the chat stays open).
    close_detail: str | None = None
    payload: dict[str, Any] | None = None  # phases and other kinds


class ProcessProgress(Frame):
    TYPE = "process-progress"
    data: ProcessProgressData
    forwarded_by: ForwardedBy | None = Field(default=None, alias="forwardedBy")

    @property
    def is_status_change(self) -> bool:
        return self.data.kind == "STATUS" and bool(self.data.status)


class ToolCallStartedData(Model):
    process_id: str = ""
    process_name: str = ""
    tool_call_id: str = ""
    tool_name: str = ""
    params: dict[str, Any] = Field(default_factory=dict)


class ToolCallStarted(Frame):
    TYPE = "tool-call-started"
    data: ToolCallStartedData


class ToolCallCompletedData(Model):
    process_id: str = ""
    process_name: str = ""
    tool_call_id: str = ""
    tool_name: str = ""
    status: str = ""  # SUCCESS, ERROR, TIMEOUT
    result_size: int = 0
    error: str = ""


class ToolCallCompleted(Frame):
    TYPE = "tool-call-completed"
    data: ToolCallCompletedData


class ProcessSpawnedData(Model):
    process_id: str = ""
    process_name: str = ""
    child_process_id: str = ""
    child_process_name: str = ""
    goal: str = ""
    engine: str = ""
    recipe: str = ""


class ProcessSpawned(Frame):
    TYPE = "process-spawned"
    data: ProcessSpawnedData


class SwitchToData(Model):
    target_session_id: str
    target_project_id: str = ""
    target_process_name: str = "chat"
    voice_announcement: str = ""


class SwitchTo(Frame):
    TYPE = "switch-to"
    data: SwitchToData


class InboxItemAdded(Frame):
    TYPE = "inbox-item-added"
    data: InboxItem


class ProcessScoped(Model):
    """Frames the reference protocol names but no engine here sends yet (docs/protocol.md
    "Not implemented yet"): their data is kept whole, with the process when it is named."""

    process_id: str | None = None
    process_name: str | None = None


class PlanProposed(Frame):
    TYPE = "plan-proposed"
    data: ProcessScoped


class TodosUpdated(Frame):
    TYPE = "todos-updated"
    data: ProcessScoped


class ProcessModeChanged(Frame):
    TYPE = "process-mode-changed"
    data: ProcessScoped


class ClientToolInvokeData(Model):
    call_id: str
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    # How long the server waits for the `client-tool-result` (the tool's registered timeoutMs,
    # default 30 s); after that the model has a TIMEOUT and a late answer is `unknown_call`.
    timeout_ms: int | None = None


class ClientToolInvoke(Frame):
    """The server asks this client to run a tool it registered (`client-tool-register`); pushed
    without `seq` (never replayed), answered with `ClientToolResult`."""

    TYPE = "client-tool-invoke"
    data: ClientToolInvokeData


class ErrorData(Model):
    error_code: int = 500
    error_message: str = ""
    reason: str = ""
    field: str | None = None


class ErrorFrame(Frame):
    TYPE = "error"
    data: ErrorData


class UnknownFrame(Frame):
    """A frame type this SDK does not model; `data` is the raw JSON value."""

    data: Any = None


PUSHED: dict[str, type[Frame]] = {
    f.TYPE: f
    for f in (
        Welcome,
        ChatMessageAppended,
        ChatMessageStreamChunk,
        ProcessProgress,
        ToolCallStarted,
        ToolCallCompleted,
        ProcessSpawned,
        SwitchTo,
        InboxItemAdded,
        PlanProposed,
        TodosUpdated,
        ProcessModeChanged,
        ClientToolInvoke,
        ErrorFrame,
    )
}


def parse_frame(raw: dict[str, Any]) -> Frame:
    """The typed model of a pushed frame (or an error); anything else, or a frame whose data
    does not match its model, is an `UnknownFrame` with the data as sent."""
    cls = PUSHED.get(str(raw.get("type", "")))
    if cls is not None:
        try:
            return cls.model_validate(raw)
        except ValidationError:
            pass
    return UnknownFrame.model_validate({**raw, "type": str(raw.get("type", ""))})
