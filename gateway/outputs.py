"""Declared shapes of every frame the gateway sends (docs/protocol.md, "Pushed frames" and the
replies under "Client frames"), the counterpart of gateway/inputs.py. The handlers build their
frames as dicts (gateway/frames.py, *_frames.py); these models describe them for the AsyncAPI
document (gateway/asyncapi.py), and tests/test_asyncapi.py validates live traffic of a whole
chat against that document, so a handler that drifts from its model fails there."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class Out(BaseModel):
    # Fields a client may ignore can be added without breaking it; what is listed is sent.
    model_config = ConfigDict(extra="allow")


# ---- pushed frames ----

CLOSE_DETAIL = (
    "Why it closed, in words (e.g. the provider's error once the retries ran out); secrets and "
    "internal addresses masked. Null unless CLOSED, or when nothing more than closeReason is known."
)
STATUS_CLOSE_DETAIL = (
    "Why it closed, in words, on a CLOSED status (as the process object's closeDetail); on the "
    "IDLE or PAUSED status that ends a chat's turn that failed for good (the chat stays open), "
    "why the turn failed. Secrets and internal addresses masked. Null otherwise."
)


class ServerInfo(Out):
    version: str
    protocol_version: int = Field(alias="protocolVersion")
    ping_interval: float = Field(alias="pingInterval", description="seconds")


class WelcomeData(Out):
    user_id: str = Field(alias="userId")
    tenant_id: str = Field(alias="tenantId")
    editor_id: str | None = Field(alias="editorId")
    profile: str
    server: ServerInfo


class ChatMessageView(Out):
    """A chat message (persisted), as chat-message-appended and process-messages carry it."""

    chat_message_id: str = Field(alias="chatMessageId")
    think_process_id: str = Field(alias="thinkProcessId")
    process_name: str = Field(alias="processName")
    role: str = Field(description="user, assistant, system or tool")
    content: str
    created_at: int = Field(alias="createdAt", description="ms since the epoch")
    meta: dict[str, JsonValue]


class StreamChunkData(Out):
    think_process_id: str = Field(alias="thinkProcessId")
    process_name: str = Field(alias="processName")
    role: str
    chunk: str


class ProgressData(Out):
    """`kind: STATUS` with `status`/`previousStatus`, or an engine's report with `payload`."""

    process_id: str = Field(alias="processId")
    process_name: str = Field(alias="processName")
    engine: str
    session_id: str = Field(alias="sessionId")
    parent_process_id: str | None = Field(alias="parentProcessId")
    kind: str = Field(description="STATUS, METRICS, PLAN, REPLY")
    status: str | None = None
    previous_status: str | None = Field(default=None, alias="previousStatus")
    close_reason: str | None = Field(default=None, alias="closeReason")
    close_detail: str | None = Field(
        default=None, alias="closeDetail", description=STATUS_CLOSE_DETAIL
    )
    payload: dict[str, JsonValue] | None = None


class ToolCallStartedData(Out):
    process_id: str = Field(alias="processId")
    process_name: str = Field(alias="processName")
    tool_call_id: str = Field(alias="toolCallId")
    tool_name: str = Field(alias="toolName")
    params: dict[str, JsonValue] = Field(description="strings cut at 500 characters")


class ToolCallCompletedData(Out):
    process_id: str = Field(alias="processId")
    process_name: str = Field(alias="processName")
    tool_call_id: str = Field(alias="toolCallId")
    tool_name: str = Field(alias="toolName")
    status: str = Field(description="SUCCESS, ERROR or TIMEOUT")
    result_size: int = Field(alias="resultSize")
    error: str = ""


class ProcessSpawnedData(Out):
    process_id: str = Field(alias="processId")
    process_name: str = Field(alias="processName")
    child_process_id: str = Field(alias="childProcessId")
    child_process_name: str = Field(alias="childProcessName")
    goal: str
    engine: str
    recipe: str


class ClientToolInvokeData(Out):
    call_id: str = Field(alias="callId")
    name: str
    params: dict[str, JsonValue]
    timeout_ms: int = Field(alias="timeoutMs")


class SessionNoticeData(Out):
    """Any other frame of the session's event stream (plan mode, the hub's frames): its shape
    is the frame's own, described in docs/protocol.md."""


class ErrorData(BaseModel):
    """A refused frame (gateway/errors.py); the same fields as the REST error body."""

    model_config = ConfigDict(extra="forbid")

    error_code: int = Field(alias="errorCode", description="HTTP-style status")
    error_message: str = Field(alias="errorMessage")
    reason: str
    field: str | None = None


# ---- replies ----


class PongData(Out):
    client_timestamp: JsonValue = Field(alias="clientTimestamp")
    server_timestamp: int = Field(alias="serverTimestamp", description="ms since the epoch")


class EmptyReply(Out):
    pass


class SessionReply(Out):
    session_id: str = Field(alias="sessionId")
    project_id: str = Field(alias="projectId")
    chat_process_id: str | None = Field(alias="chatProcessId")
    chat_process_name: str | None = Field(alias="chatProcessName")
    chat_engine: str | None = Field(alias="chatEngine")
    status: str | None


class SessionCreated(SessionReply):
    hub: bool | None = None
    resumed: bool | None = Field(default=None, description="hub: an open hub session reused")


class SessionResumed(SessionReply):
    since_seq: int = Field(alias="sinceSeq")
    bound: bool
    resumed: bool
    took_over: bool = Field(alias="tookOver")


class SessionMonitored(SessionReply):
    since_seq: int = Field(alias="sinceSeq")
    monitor: bool


class SteerReply(Out):
    think_process_id: str | None = Field(alias="thinkProcessId")
    process_name: str | None = Field(alias="processName")
    status: str | None
    outcome: str
    reason: str | None
    message_id: str | None = Field(alias="messageId")
    duplicate: bool


class CommandReply(Out):
    outcome: str
    reason: str | None
    message_id: str | None = Field(alias="messageId")


class ProcessView(Out):
    think_process_id: str = Field(alias="thinkProcessId")
    process_name: str = Field(alias="processName")
    title: str
    goal: str
    engine: str
    recipe: str
    status: str
    close_reason: str | None = Field(alias="closeReason")
    close_detail: str | None = Field(alias="closeDetail", description=CLOSE_DETAIL)
    parent_process_id: str | None = Field(alias="parentProcessId")
    pending_count: int = Field(alias="pendingCount")
    created_at: int = Field(alias="createdAt")


class ProcessesReply(Out):
    processes: list[ProcessView]


class MessagesReply(Out):
    messages: list[ChatMessageView]


class PlanTodo(Out):
    id: str
    text: str
    status: str
    project: str | None = None


class PlanView(Out):
    process_id: str = Field(alias="processId")
    plan_id: str | None = Field(alias="planId")
    title: str | None
    mode: str
    status: str | None
    todos: list[PlanTodo]


class ClientToolsRegistered(Out):
    registered: int
    client_tools_enabled: bool = Field(alias="clientToolsEnabled")


class ClientToolResultAccepted(Out):
    call_id: str = Field(alias="callId")
    accepted: bool


# Reply data by request type; one of several shapes where a handler has several answers.
REPLIES: dict[str, tuple[type[BaseModel], ...]] = {
    "ping": (PongData,),  # sent as `pong`
    "logout": (EmptyReply,),
    "session-create": (SessionCreated,),
    "session-resume": (SessionResumed,),
    "session-monitor": (SessionMonitored,),
    "session-unbind": (EmptyReply,),
    "process-steer": (SteerReply,),
    "process-command": (CommandReply,),
    "process-pause": (ProcessView, ProcessesReply),
    "process-resume": (ProcessView,),
    "process-stop": (ProcessView,),
    "process-list": (ProcessesReply,),
    "process-messages": (MessagesReply,),
    "plan-decision": (PlanView,),
    "plan-get": (PlanView,),
    "client-tool-register": (ClientToolsRegistered,),
    "client-tool-result": (ClientToolResultAccepted,),
}

# Pushed frames by type (`seq`: a persisted or streamed event of the bound session).
PUSHED: dict[str, tuple[type[BaseModel], bool]] = {
    "welcome": (WelcomeData, False),
    "chat-message-appended": (ChatMessageView, True),
    "chat-message-stream-chunk": (StreamChunkData, True),
    "process-progress": (ProgressData, True),
    "tool-call-started": (ToolCallStartedData, True),
    "tool-call-completed": (ToolCallCompletedData, True),
    "process-spawned": (ProcessSpawnedData, True),
    "client-tool-invoke": (ClientToolInvokeData, False),
}


def reply_type(request_type: str) -> str:
    return "pong" if request_type == "ping" else request_type
