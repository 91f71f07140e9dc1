from google.protobuf import struct_pb2 as _struct_pb2
from vance.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_SCOPE_UNSPECIFIED: _ClassVar[MemoryScope]
    MEMORY_SCOPE_PROCESS: _ClassVar[MemoryScope]
    MEMORY_SCOPE_PROJECT: _ClassVar[MemoryScope]
MEMORY_SCOPE_UNSPECIFIED: MemoryScope
MEMORY_SCOPE_PROCESS: MemoryScope
MEMORY_SCOPE_PROJECT: MemoryScope

class SessionCascadeRequest(_message.Message):
    __slots__ = ("session_id", "suspend_cause", "close_reason", "process_ids")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SUSPEND_CAUSE_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    PROCESS_IDS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    suspend_cause: _common_pb2.SuspendCause
    close_reason: _common_pb2.CloseReason
    process_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_id: _Optional[str] = ..., suspend_cause: _Optional[_Union[_common_pb2.SuspendCause, str]] = ..., close_reason: _Optional[_Union[_common_pb2.CloseReason, str]] = ..., process_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListSessionsProcessesRequest(_message.Message):
    __slots__ = ("session_ids", "include_terminated")
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TERMINATED_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    include_terminated: bool
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ..., include_terminated: _Optional[bool] = ...) -> None: ...

class ListSessionsProcessesResponse(_message.Message):
    __slots__ = ("sessions",)
    class SessionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ListProcessesResponse
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ListProcessesResponse, _Mapping]] = ...) -> None: ...
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.MessageMap[str, ListProcessesResponse]
    def __init__(self, sessions: _Optional[_Mapping[str, ListProcessesResponse]] = ...) -> None: ...

class SessionsCascadeRequest(_message.Message):
    __slots__ = ("session_ids", "suspend_cause", "close_reason")
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    SUSPEND_CAUSE_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    suspend_cause: _common_pb2.SuspendCause
    close_reason: _common_pb2.CloseReason
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ..., suspend_cause: _Optional[_Union[_common_pb2.SuspendCause, str]] = ..., close_reason: _Optional[_Union[_common_pb2.CloseReason, str]] = ...) -> None: ...

class SessionsCascadeResponse(_message.Message):
    __slots__ = ("processes", "failed_session_ids")
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    FAILED_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    processes: int
    failed_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, processes: _Optional[int] = ..., failed_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteSessionDataResponse(_message.Message):
    __slots__ = ("processes", "chat_messages", "events", "inbox")
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    CHAT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    INBOX_FIELD_NUMBER: _ClassVar[int]
    processes: int
    chat_messages: int
    events: int
    inbox: int
    def __init__(self, processes: _Optional[int] = ..., chat_messages: _Optional[int] = ..., events: _Optional[int] = ..., inbox: _Optional[int] = ...) -> None: ...

class RespawnChatRequest(_message.Message):
    __slots__ = ("process", "history_from_process_id")
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FROM_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    process: CreateProcessRequest
    history_from_process_id: str
    def __init__(self, process: _Optional[_Union[CreateProcessRequest, _Mapping]] = ..., history_from_process_id: _Optional[str] = ...) -> None: ...

class CreateProcessRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "session_id", "name", "title", "goal", "engine", "recipe_name", "parent_process_id", "recipe_snapshot", "params", "owner_user_id", "idempotency_key", "start", "engine_version")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    RECIPE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARENT_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPE_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    session_id: str
    name: str
    title: str
    goal: str
    engine: str
    recipe_name: str
    parent_process_id: str
    recipe_snapshot: _struct_pb2.Struct
    params: _struct_pb2.Struct
    owner_user_id: str
    idempotency_key: str
    start: bool
    engine_version: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., session_id: _Optional[str] = ..., name: _Optional[str] = ..., title: _Optional[str] = ..., goal: _Optional[str] = ..., engine: _Optional[str] = ..., recipe_name: _Optional[str] = ..., parent_process_id: _Optional[str] = ..., recipe_snapshot: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., owner_user_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., start: _Optional[bool] = ..., engine_version: _Optional[str] = ...) -> None: ...

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

class ChatFeedRequest(_message.Message):
    __slots__ = ("after",)
    AFTER_FIELD_NUMBER: _ClassVar[int]
    after: int
    def __init__(self, after: _Optional[int] = ...) -> None: ...

class AckChatFeedResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChatFeedPage(_message.Message):
    __slots__ = ("position", "messages")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    position: int
    messages: _containers.RepeatedCompositeFieldContainer[_common_pb2.ChatMessage]
    def __init__(self, position: _Optional[int] = ..., messages: _Optional[_Iterable[_Union[_common_pb2.ChatMessage, _Mapping]]] = ...) -> None: ...

class DrainPendingRequest(_message.Message):
    __slots__ = ("process_id", "exclude_ids")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_IDS_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    exclude_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, process_id: _Optional[str] = ..., exclude_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DrainPendingResponse(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_common_pb2.SteerMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[_common_pb2.SteerMessage, _Mapping]]] = ...) -> None: ...

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

class EngineDescriptor(_message.Message):
    __slots__ = ("name", "version", "hooks")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    HOOKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    hooks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., hooks: _Optional[_Iterable[str]] = ...) -> None: ...

class WorkerHello(_message.Message):
    __slots__ = ("worker_id", "engines", "slots")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    engines: _containers.RepeatedCompositeFieldContainer[EngineDescriptor]
    slots: int
    def __init__(self, worker_id: _Optional[str] = ..., engines: _Optional[_Iterable[_Union[EngineDescriptor, _Mapping]]] = ..., slots: _Optional[int] = ...) -> None: ...

class WorkerHeartbeat(_message.Message):
    __slots__ = ("turn_ids",)
    TURN_IDS_FIELD_NUMBER: _ClassVar[int]
    turn_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, turn_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class WorkerDraining(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WorkerCapacity(_message.Message):
    __slots__ = ("slots", "reason")
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    slots: int
    reason: str
    def __init__(self, slots: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ChatAppend(_message.Message):
    __slots__ = ("message_id", "role", "content", "meta")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    META_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    role: _common_pb2.ChatRole
    content: str
    meta: _struct_pb2.Struct
    def __init__(self, message_id: _Optional[str] = ..., role: _Optional[_Union[_common_pb2.ChatRole, str]] = ..., content: _Optional[str] = ..., meta: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TurnProgress(_message.Message):
    __slots__ = ("kind", "payload")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    kind: str
    payload: _struct_pb2.Struct
    def __init__(self, kind: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TurnEvent(_message.Message):
    __slots__ = ("turn_id", "chat_append", "stream_chunk", "progress")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_APPEND_FIELD_NUMBER: _ClassVar[int]
    STREAM_CHUNK_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    chat_append: ChatAppend
    stream_chunk: _common_pb2.StreamChunk
    progress: TurnProgress
    def __init__(self, turn_id: _Optional[str] = ..., chat_append: _Optional[_Union[ChatAppend, _Mapping]] = ..., stream_chunk: _Optional[_Union[_common_pb2.StreamChunk, _Mapping]] = ..., progress: _Optional[_Union[TurnProgress, _Mapping]] = ...) -> None: ...

class TurnCommit(_message.Message):
    __slots__ = ("turn_id", "status", "close_reason", "drained_ids", "summary_for_parent", "parent_payload", "close_detail", "events", "chat_history_summary", "chat_history_summary_through")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    DRAINED_IDS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FOR_PARENT_FIELD_NUMBER: _ClassVar[int]
    PARENT_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CLOSE_DETAIL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_SUMMARY_THROUGH_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    status: _common_pb2.ProcessStatus
    close_reason: _common_pb2.CloseReason
    drained_ids: _containers.RepeatedScalarFieldContainer[str]
    summary_for_parent: str
    parent_payload: _struct_pb2.Struct
    close_detail: str
    events: _containers.RepeatedCompositeFieldContainer[TurnEvent]
    chat_history_summary: str
    chat_history_summary_through: int
    def __init__(self, turn_id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.ProcessStatus, str]] = ..., close_reason: _Optional[_Union[_common_pb2.CloseReason, str]] = ..., drained_ids: _Optional[_Iterable[str]] = ..., summary_for_parent: _Optional[str] = ..., parent_payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., close_detail: _Optional[str] = ..., events: _Optional[_Iterable[_Union[TurnEvent, _Mapping]]] = ..., chat_history_summary: _Optional[str] = ..., chat_history_summary_through: _Optional[int] = ...) -> None: ...

class TurnFailure(_message.Message):
    __slots__ = ("turn_id", "error", "retryable")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    error: str
    retryable: bool
    def __init__(self, turn_id: _Optional[str] = ..., error: _Optional[str] = ..., retryable: _Optional[bool] = ...) -> None: ...

class WorkerMessage(_message.Message):
    __slots__ = ("hello", "heartbeat", "event", "commit", "failure", "draining", "capacity")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    hello: WorkerHello
    heartbeat: WorkerHeartbeat
    event: TurnEvent
    commit: TurnCommit
    failure: TurnFailure
    draining: WorkerDraining
    capacity: WorkerCapacity
    def __init__(self, hello: _Optional[_Union[WorkerHello, _Mapping]] = ..., heartbeat: _Optional[_Union[WorkerHeartbeat, _Mapping]] = ..., event: _Optional[_Union[TurnEvent, _Mapping]] = ..., commit: _Optional[_Union[TurnCommit, _Mapping]] = ..., failure: _Optional[_Union[TurnFailure, _Mapping]] = ..., draining: _Optional[_Union[WorkerDraining, _Mapping]] = ..., capacity: _Optional[_Union[WorkerCapacity, _Mapping]] = ...) -> None: ...

class TurnAssignment(_message.Message):
    __slots__ = ("turn_id", "attempt", "call", "process", "pending", "lease_deadline_ms", "chat_count", "recent_chat", "project_memory_included", "project_memory", "recent_chat_held", "trace_context")
    class TraceContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    LEASE_DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    CHAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    RECENT_CHAT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_MEMORY_INCLUDED_FIELD_NUMBER: _ClassVar[int]
    PROJECT_MEMORY_FIELD_NUMBER: _ClassVar[int]
    RECENT_CHAT_HELD_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    attempt: int
    call: _common_pb2.LifecycleCall
    process: _common_pb2.ThinkProcess
    pending: _containers.RepeatedCompositeFieldContainer[_common_pb2.SteerMessage]
    lease_deadline_ms: int
    chat_count: int
    recent_chat: _containers.RepeatedCompositeFieldContainer[_common_pb2.ChatMessage]
    project_memory_included: bool
    project_memory: _containers.RepeatedCompositeFieldContainer[MemoryRecord]
    recent_chat_held: bool
    trace_context: _containers.ScalarMap[str, str]
    def __init__(self, turn_id: _Optional[str] = ..., attempt: _Optional[int] = ..., call: _Optional[_Union[_common_pb2.LifecycleCall, str]] = ..., process: _Optional[_Union[_common_pb2.ThinkProcess, _Mapping]] = ..., pending: _Optional[_Iterable[_Union[_common_pb2.SteerMessage, _Mapping]]] = ..., lease_deadline_ms: _Optional[int] = ..., chat_count: _Optional[int] = ..., recent_chat: _Optional[_Iterable[_Union[_common_pb2.ChatMessage, _Mapping]]] = ..., project_memory_included: _Optional[bool] = ..., project_memory: _Optional[_Iterable[_Union[MemoryRecord, _Mapping]]] = ..., recent_chat_held: _Optional[bool] = ..., trace_context: _Optional[_Mapping[str, str]] = ...) -> None: ...

class TurnAck(_message.Message):
    __slots__ = ("turn_id", "ok", "error", "chat_included", "chat")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CHAT_INCLUDED_FIELD_NUMBER: _ClassVar[int]
    CHAT_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    ok: bool
    error: str
    chat_included: bool
    chat: _containers.RepeatedCompositeFieldContainer[_common_pb2.ChatMessage]
    def __init__(self, turn_id: _Optional[str] = ..., ok: _Optional[bool] = ..., error: _Optional[str] = ..., chat_included: _Optional[bool] = ..., chat: _Optional[_Iterable[_Union[_common_pb2.ChatMessage, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("lease_ms", "heartbeat_ms")
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_MS_FIELD_NUMBER: _ClassVar[int]
    lease_ms: int
    heartbeat_ms: int
    def __init__(self, lease_ms: _Optional[int] = ..., heartbeat_ms: _Optional[int] = ...) -> None: ...

class DispatchMessage(_message.Message):
    __slots__ = ("welcome", "assignment", "commit_ack", "cancel_turn_id")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    COMMIT_ACK_FIELD_NUMBER: _ClassVar[int]
    CANCEL_TURN_ID_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    assignment: TurnAssignment
    commit_ack: TurnAck
    cancel_turn_id: str
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., assignment: _Optional[_Union[TurnAssignment, _Mapping]] = ..., commit_ack: _Optional[_Union[TurnAck, _Mapping]] = ..., cancel_turn_id: _Optional[str] = ...) -> None: ...

class PublishNoticeRequest(_message.Message):
    __slots__ = ("session_ids", "notice")
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    notice: _common_pb2.Notice
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ..., notice: _Optional[_Union[_common_pb2.Notice, _Mapping]] = ...) -> None: ...

class PublishNoticeResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MemoryRecord(_message.Message):
    __slots__ = ("id", "scope", "kind", "title", "content", "process_id", "created_at_ms")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    id: str
    scope: MemoryScope
    kind: str
    title: str
    content: str
    process_id: str
    created_at_ms: int
    def __init__(self, id: _Optional[str] = ..., scope: _Optional[_Union[MemoryScope, str]] = ..., kind: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., process_id: _Optional[str] = ..., created_at_ms: _Optional[int] = ...) -> None: ...

class RecordMemoryRequest(_message.Message):
    __slots__ = ("process_id", "scope", "kind", "title", "content", "idempotency_key")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    scope: MemoryScope
    kind: str
    title: str
    content: str
    idempotency_key: str
    def __init__(self, process_id: _Optional[str] = ..., scope: _Optional[_Union[MemoryScope, str]] = ..., kind: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListMemoryRequest(_message.Message):
    __slots__ = ("process_id", "scope", "limit")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    scope: MemoryScope
    limit: int
    def __init__(self, process_id: _Optional[str] = ..., scope: _Optional[_Union[MemoryScope, str]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListMemoryResponse(_message.Message):
    __slots__ = ("records",)
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[MemoryRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[MemoryRecord, _Mapping]]] = ...) -> None: ...

class ListSessionEnginesRequest(_message.Message):
    __slots__ = ("session_ids",)
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class EngineState(_message.Message):
    __slots__ = ("process_id", "status", "pending_count")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PENDING_COUNT_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    status: _common_pb2.ProcessStatus
    pending_count: int
    def __init__(self, process_id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.ProcessStatus, str]] = ..., pending_count: _Optional[int] = ...) -> None: ...

class SessionEngines(_message.Message):
    __slots__ = ("session_id", "engines")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    engines: _containers.RepeatedCompositeFieldContainer[EngineState]
    def __init__(self, session_id: _Optional[str] = ..., engines: _Optional[_Iterable[_Union[EngineState, _Mapping]]] = ...) -> None: ...

class ListSessionEnginesResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionEngines]
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionEngines, _Mapping]]] = ...) -> None: ...

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
