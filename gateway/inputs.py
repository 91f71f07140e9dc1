"""Declared shapes of every client frame's `data` (docs/protocol.md, "Client frames").

The models are strict: a string field takes only a string (absent, `null` and `""` mean "not
given"), a boolean only `true`/`false` (never 0/1), an integer only an integer within the range
of the proto field it lands in. Unknown fields are ignored, as the envelope's are. Whether a
field is required is the handler's check (`required`), so that the order of errors a client
sees stays the documented one (e.g. `no_session` before `content_required`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, StrictInt, StrictStr

from gateway.errors import GatewayError
from gateway.limits import INT32_MAX, INT64_MAX, MAX_FRAME_BYTES, MAX_ID_CHARS
from gateway.ranges import DurationMs

Id = Annotated[StrictStr, Field(max_length=MAX_ID_CHARS)]
Text = Annotated[StrictStr, Field(max_length=MAX_FRAME_BYTES)]
Seq = Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]
Limit32 = Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]


class FrameData(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Envelope(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: Id = ""
    reply_to: Any = Field(default=None, alias="replyTo")
    type: Annotated[StrictStr, Field(max_length=64)]
    data: dict[str, Any] = Field(default_factory=dict)


def required(value: str | None, name: str) -> str:
    if not value:
        raise GatewayError(400, f"{name} is required", f"{name}_required", field=name)
    return value


class NoData(FrameData):
    pass


class PingData(FrameData):
    client_timestamp: JsonValue = Field(default=None, alias="clientTimestamp")


class Targeted(FrameData):
    """process-*: `processId` and/or `processName`; neither means the chat process."""

    process_id: Id | None = Field(default=None, alias="processId")
    process_name: Id | None = Field(default=None, alias="processName")

    @property
    def named(self) -> bool:
        return bool(self.process_id or self.process_name)


class SteerData(Targeted):
    content: Text | None = None
    idempotency_key: Id | None = Field(default=None, alias="idempotencyKey")
    # The hub question this message answers (an option clicked under a relayed question).
    ask_id: Id | None = Field(default=None, alias="askId")


class PlanStepData(FrameData):
    text: Annotated[StrictStr, Field(max_length=500)]
    project: Id | None = None


class PlanDecisionData(Targeted):
    """plan-decision: the user's answer to a proposed plan (docs/protocol.md "Plan mode")."""

    plan_id: Id | None = Field(default=None, alias="planId")
    decision: Id | None = None
    steps: Annotated[list[PlanStepData], Field(max_length=20)] | None = None
    comment: Annotated[StrictStr, Field(max_length=4000)] | None = None
    idempotency_key: Id | None = Field(default=None, alias="idempotencyKey")


class CommandData(Targeted):
    command: Id | None = None
    params: dict[str, JsonValue] | None = None
    idempotency_key: Id | None = Field(default=None, alias="idempotencyKey")


class ListData(FrameData):
    include_terminated: StrictBool = Field(default=False, alias="includeTerminated")


class MessagesData(Targeted):
    limit: Limit32 = 0


class LifecycleData(FrameData):
    """Explicit lifecycle values of `session-create`; any problem is `bad_lifecycle`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    on_disconnect: Id | None = Field(default=None, alias="onDisconnect")
    on_idle: Id | None = Field(default=None, alias="onIdle")
    on_suspend: Id | None = Field(default=None, alias="onSuspend")
    idle_timeout_ms: DurationMs | None = Field(default=None, alias="idleTimeoutMs")
    suspend_keep_duration_ms: DurationMs | None = Field(default=None, alias="suspendKeepDurationMs")


class CreateData(FrameData):
    project_id: Id | None = Field(default=None, alias="projectId")
    profile: Id | None = None
    autonomous: StrictBool = False
    chat_engine: Id | None = Field(default=None, alias="chatEngine")
    recipe: Id | None = None
    lifecycle: LifecycleData | None = None
    allow_multiple_clients: StrictBool = Field(default=False, alias="allowMultipleClients")
    hub: StrictBool = False  # the user's hub instead (docs/protocol.md "Hub")


class ResumeData(FrameData):
    session_id: Id | None = Field(default=None, alias="sessionId")
    since_seq: Seq = Field(default=0, alias="sinceSeq")
    takeover: StrictBool = False


class MonitorData(FrameData):
    session_id: Id | None = Field(default=None, alias="sessionId")
    since_seq: Seq = Field(default=0, alias="sinceSeq")


class AuthData(FrameData):
    token: Annotated[StrictStr, Field(min_length=1, max_length=8192)]
