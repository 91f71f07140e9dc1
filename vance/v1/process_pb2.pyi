from vance.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetProcessRequest(_message.Message):
    __slots__ = ("process_id",)
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    def __init__(self, process_id: _Optional[str] = ...) -> None: ...

class ProcessRef(_message.Message):
    __slots__ = ("process_id", "session_id", "process_name")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    session_id: str
    process_name: str
    def __init__(self, process_id: _Optional[str] = ..., session_id: _Optional[str] = ..., process_name: _Optional[str] = ...) -> None: ...

class ListProcessesRequest(_message.Message):
    __slots__ = ("session_id", "include_terminated", "parent_process_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TERMINATED_FIELD_NUMBER: _ClassVar[int]
    PARENT_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    include_terminated: bool
    parent_process_id: str
    def __init__(self, session_id: _Optional[str] = ..., include_terminated: _Optional[bool] = ..., parent_process_id: _Optional[str] = ...) -> None: ...

class ListProcessesResponse(_message.Message):
    __slots__ = ("processes",)
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    processes: _containers.RepeatedCompositeFieldContainer[_common_pb2.ThinkProcess]
    def __init__(self, processes: _Optional[_Iterable[_Union[_common_pb2.ThinkProcess, _Mapping]]] = ...) -> None: ...

class SteerRequest(_message.Message):
    __slots__ = ("target", "message")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    target: ProcessRef
    message: _common_pb2.SteerMessage
    def __init__(self, target: _Optional[_Union[ProcessRef, _Mapping]] = ..., message: _Optional[_Union[_common_pb2.SteerMessage, _Mapping]] = ...) -> None: ...

class SteerResponse(_message.Message):
    __slots__ = ("outcome", "reason", "message_id", "duplicate", "process")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    outcome: _common_pb2.DeliveryOutcome
    reason: str
    message_id: str
    duplicate: bool
    process: _common_pb2.ThinkProcess
    def __init__(self, outcome: _Optional[_Union[_common_pb2.DeliveryOutcome, str]] = ..., reason: _Optional[str] = ..., message_id: _Optional[str] = ..., duplicate: _Optional[bool] = ..., process: _Optional[_Union[_common_pb2.ThinkProcess, _Mapping]] = ...) -> None: ...

class PauseSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class ListChatMessagesRequest(_message.Message):
    __slots__ = ("session_id", "process_id", "limit", "through")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    THROUGH_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    process_id: str
    limit: int
    through: int
    def __init__(self, session_id: _Optional[str] = ..., process_id: _Optional[str] = ..., limit: _Optional[int] = ..., through: _Optional[int] = ...) -> None: ...

class ListChatMessagesResponse(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_common_pb2.ChatMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[_common_pb2.ChatMessage, _Mapping]]] = ...) -> None: ...

class SubscribeSessionRequest(_message.Message):
    __slots__ = ("session_id", "since_seq", "replay_only", "until_seq")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_SEQ_FIELD_NUMBER: _ClassVar[int]
    REPLAY_ONLY_FIELD_NUMBER: _ClassVar[int]
    UNTIL_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    since_seq: int
    replay_only: bool
    until_seq: int
    def __init__(self, session_id: _Optional[str] = ..., since_seq: _Optional[int] = ..., replay_only: _Optional[bool] = ..., until_seq: _Optional[int] = ...) -> None: ...

class ListWorkersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WorkerInfo(_message.Message):
    __slots__ = ("worker_id", "engines", "slots", "free_slots", "draining", "connected_at_ms", "running_turns")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    FREE_SLOTS_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TURNS_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    engines: _containers.RepeatedScalarFieldContainer[str]
    slots: int
    free_slots: int
    draining: bool
    connected_at_ms: int
    running_turns: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, worker_id: _Optional[str] = ..., engines: _Optional[_Iterable[str]] = ..., slots: _Optional[int] = ..., free_slots: _Optional[int] = ..., draining: _Optional[bool] = ..., connected_at_ms: _Optional[int] = ..., running_turns: _Optional[_Iterable[str]] = ...) -> None: ...

class ListWorkersResponse(_message.Message):
    __slots__ = ("workers",)
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    def __init__(self, workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ...) -> None: ...

class SessionEventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.SessionEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.SessionEvent, _Mapping]]] = ...) -> None: ...

class PlanStep(_message.Message):
    __slots__ = ("id", "text", "status", "project")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    status: str
    project: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., status: _Optional[str] = ..., project: _Optional[str] = ...) -> None: ...

class PlanState(_message.Message):
    __slots__ = ("process_id", "plan_id", "title", "mode", "status", "steps", "session_id")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    plan_id: str
    title: str
    mode: str
    status: str
    steps: _containers.RepeatedCompositeFieldContainer[PlanStep]
    session_id: str
    def __init__(self, process_id: _Optional[str] = ..., plan_id: _Optional[str] = ..., title: _Optional[str] = ..., mode: _Optional[str] = ..., status: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[PlanStep, _Mapping]]] = ..., session_id: _Optional[str] = ...) -> None: ...

class DecidePlanRequest(_message.Message):
    __slots__ = ("process_id", "session_id", "plan_id", "decision", "steps", "comment", "idempotency_key")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    session_id: str
    plan_id: str
    decision: str
    steps: _containers.RepeatedCompositeFieldContainer[PlanStep]
    comment: str
    idempotency_key: str
    def __init__(self, process_id: _Optional[str] = ..., session_id: _Optional[str] = ..., plan_id: _Optional[str] = ..., decision: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[PlanStep, _Mapping]]] = ..., comment: _Optional[str] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class SetConnectionProfileRequest(_message.Message):
    __slots__ = ("session_id", "profile")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    profile: str
    def __init__(self, session_id: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class SetConnectionProfileResponse(_message.Message):
    __slots__ = ("processes",)
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    processes: int
    def __init__(self, processes: _Optional[int] = ...) -> None: ...
