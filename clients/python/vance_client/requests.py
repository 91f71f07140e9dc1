"""Frames a client sends (docs/protocol.md "Client frames") and the replies they get.

Each request is a model with its wire `TYPE` and a `reply` method that reads the reply's data
into the reply's model, so `Socket.request(ProcessSteer(content="hi"))` is typed end to end."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Protocol, TypeVar

from pydantic import Field, JsonValue

from vance_client.models import ChatMessage, Model, ProcessInfo

R_co = TypeVar("R_co", covariant=True)


class Request(Protocol[R_co]):
    TYPE: ClassVar[str]

    def wire(self) -> dict[str, Any]: ...

    def reply(self, data: dict[str, Any]) -> R_co: ...


class Out(Model):
    """A client frame's data: sent with camelCase names, fields left unset not sent."""

    TYPE: ClassVar[str] = ""

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


# --- replies ---------------------------------------------------------------------------------


class Empty(Model):
    pass


class Pong(Model):
    client_timestamp: JsonValue = None
    server_timestamp: int = 0


class SessionOpened(Model):
    """The reply to session-create, session-resume and session-monitor."""

    session_id: str
    project_id: str = ""
    chat_process_id: str | None = None
    chat_process_name: str | None = None
    chat_engine: str | None = None
    since_seq: int = 0
    bound: bool = True
    resumed: bool = False
    took_over: bool = False
    monitor: bool = False
    hub: bool = False


class SteerReply(Model):
    think_process_id: str | None = None
    process_name: str = ""
    status: str | None = None
    outcome: Literal["STARTED", "QUEUED", "DEFERRED", "REJECTED"] | str = ""
    reason: str | None = None
    message_id: str | None = None
    duplicate: bool = False


class CommandReply(Model):
    outcome: str = ""
    reason: str | None = None
    message_id: str | None = None


class Processes(Model):
    processes: list[ProcessInfo] = Field(default_factory=list)


class Messages(Model):
    messages: list[ChatMessage] = Field(default_factory=list)


# --- requests --------------------------------------------------------------------------------


class Ping(Out):
    TYPE = "ping"
    client_timestamp: JsonValue = None

    def reply(self, data: dict[str, Any]) -> Pong:
        return Pong.model_validate(data)


class Auth(Out):
    """The first frame of a socket opened without a token (the server sends `welcome`)."""

    TYPE = "auth"
    token: str


class Logout(Out):
    TYPE = "logout"

    def reply(self, data: dict[str, Any]) -> Empty:
        return Empty.model_validate(data)


class LifecycleOverride(Model):
    on_disconnect: Literal["SUSPEND", "KEEP_OPEN", "CLOSE"] | None = None
    on_idle: Literal["SUSPEND", "NONE"] | None = None
    on_suspend: Literal["KEEP", "CLOSE"] | None = None
    idle_timeout_ms: int | None = None
    suspend_keep_duration_ms: int | None = None


class SessionCreate(Out):
    TYPE = "session-create"
    project_id: str | None = None
    profile: str | None = None
    autonomous: bool | None = None
    chat_engine: str | None = None
    recipe: str | None = None
    lifecycle: LifecycleOverride | None = None
    allow_multiple_clients: bool | None = None
    hub: bool | None = None

    def reply(self, data: dict[str, Any]) -> SessionOpened:
        return SessionOpened.model_validate(data)


class SessionResume(Out):
    TYPE = "session-resume"
    session_id: str
    since_seq: int = 0
    takeover: bool | None = None

    def reply(self, data: dict[str, Any]) -> SessionOpened:
        return SessionOpened.model_validate(data)


class SessionMonitor(Out):
    TYPE = "session-monitor"
    session_id: str
    since_seq: int = 0

    def reply(self, data: dict[str, Any]) -> SessionOpened:
        return SessionOpened.model_validate(data)


class SessionUnbind(Out):
    TYPE = "session-unbind"

    def reply(self, data: dict[str, Any]) -> Empty:
        return Empty.model_validate(data)


class Target(Out):
    """process-*: `processId` and/or `processName`; neither: the chat process."""

    process_id: str | None = None
    process_name: str | None = None


class ProcessSteer(Target):
    TYPE = "process-steer"
    content: str
    idempotency_key: str | None = None

    def reply(self, data: dict[str, Any]) -> SteerReply:
        return SteerReply.model_validate(data)


class ProcessCommand(Target):
    TYPE = "process-command"
    command: str
    params: dict[str, JsonValue] | None = None
    idempotency_key: str | None = None

    def reply(self, data: dict[str, Any]) -> CommandReply:
        return CommandReply.model_validate(data)


class ProcessPause(Target):
    """With a target: that process (reply: the process). The session-wide form (the ESC
    key) is `PauseSession`."""

    TYPE = "process-pause"

    def reply(self, data: dict[str, Any]) -> ProcessInfo:
        return ProcessInfo.model_validate(data)


class PauseSession(Out):
    """process-pause without a target: every RUNNING and INIT process of the session."""

    TYPE = "process-pause"

    def reply(self, data: dict[str, Any]) -> Processes:
        return Processes.model_validate(data)


class ProcessResume(Target):
    TYPE = "process-resume"

    def reply(self, data: dict[str, Any]) -> ProcessInfo:
        return ProcessInfo.model_validate(data)


class ProcessStop(Target):
    TYPE = "process-stop"

    def reply(self, data: dict[str, Any]) -> ProcessInfo:
        return ProcessInfo.model_validate(data)


class ProcessList(Out):
    TYPE = "process-list"
    include_terminated: bool | None = None

    def reply(self, data: dict[str, Any]) -> Processes:
        return Processes.model_validate(data)


class ProcessMessages(Target):
    TYPE = "process-messages"
    limit: int | None = None

    def reply(self, data: dict[str, Any]) -> Messages:
        return Messages.model_validate(data)


# --- client tools (docs/clients.md "Client tools"; the server's models: gateway/client_tools.py) --


class ClientToolsRegistered(Model):
    registered: int = 0
    client_tools_enabled: bool = False


class ClientToolRegister(Out):
    """The tools this connection hosts, sent after each bind: each `{name, description,
    parameters, timeoutMs?}` (names `client_...`, at most 64). An empty list withdraws them (the
    web client's frame: it hosts none)."""

    TYPE = "client-tool-register"
    tools: list[dict[str, JsonValue]] = Field(default_factory=list)

    def reply(self, data: dict[str, Any]) -> ClientToolsRegistered:
        return ClientToolsRegistered.model_validate(data)


class ClientToolAccepted(Model):
    call_id: str = ""
    accepted: bool = False


class ClientToolResult(Out):
    """The answer to a `client-tool-invoke`: `status` SUCCESS with `result` (any JSON value,
    what the model reads), or ERROR with `error`."""

    TYPE = "client-tool-result"
    call_id: str
    status: Literal["SUCCESS", "ERROR"]
    result: JsonValue = None
    error: str | None = None

    def reply(self, data: dict[str, Any]) -> ClientToolAccepted:
        return ClientToolAccepted.model_validate(data)
