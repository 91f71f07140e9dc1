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

class LifecycleCall(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIFECYCLE_CALL_UNSPECIFIED: _ClassVar[LifecycleCall]
    LIFECYCLE_CALL_START: _ClassVar[LifecycleCall]
    LIFECYCLE_CALL_STEER: _ClassVar[LifecycleCall]
    LIFECYCLE_CALL_RESUME: _ClassVar[LifecycleCall]
    LIFECYCLE_CALL_SUSPEND: _ClassVar[LifecycleCall]
    LIFECYCLE_CALL_STOP: _ClassVar[LifecycleCall]
    LIFECYCLE_CALL_PEER: _ClassVar[LifecycleCall]
MEMORY_SCOPE_UNSPECIFIED: MemoryScope
MEMORY_SCOPE_PROCESS: MemoryScope
MEMORY_SCOPE_PROJECT: MemoryScope
LIFECYCLE_CALL_UNSPECIFIED: LifecycleCall
LIFECYCLE_CALL_START: LifecycleCall
LIFECYCLE_CALL_STEER: LifecycleCall
LIFECYCLE_CALL_RESUME: LifecycleCall
LIFECYCLE_CALL_SUSPEND: LifecycleCall
LIFECYCLE_CALL_STOP: LifecycleCall
LIFECYCLE_CALL_PEER: LifecycleCall

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
    __slots__ = ("worker_id", "engines", "slots", "reads_dispatch_batch")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    READS_DISPATCH_BATCH_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    engines: _containers.RepeatedCompositeFieldContainer[EngineDescriptor]
    slots: int
    reads_dispatch_batch: bool
    def __init__(self, worker_id: _Optional[str] = ..., engines: _Optional[_Iterable[_Union[EngineDescriptor, _Mapping]]] = ..., slots: _Optional[int] = ..., reads_dispatch_batch: _Optional[bool] = ...) -> None: ...

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
    __slots__ = ("turn_id", "status", "close_reason", "summary_for_parent", "parent_payload", "close_detail", "events", "chat_history_summary", "chat_history_summary_through")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FOR_PARENT_FIELD_NUMBER: _ClassVar[int]
    PARENT_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CLOSE_DETAIL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_SUMMARY_THROUGH_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    status: _common_pb2.ProcessStatus
    close_reason: _common_pb2.CloseReason
    summary_for_parent: str
    parent_payload: _struct_pb2.Struct
    close_detail: str
    events: _containers.RepeatedCompositeFieldContainer[TurnEvent]
    chat_history_summary: str
    chat_history_summary_through: int
    def __init__(self, turn_id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.ProcessStatus, str]] = ..., close_reason: _Optional[_Union[_common_pb2.CloseReason, str]] = ..., summary_for_parent: _Optional[str] = ..., parent_payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., close_detail: _Optional[str] = ..., events: _Optional[_Iterable[_Union[TurnEvent, _Mapping]]] = ..., chat_history_summary: _Optional[str] = ..., chat_history_summary_through: _Optional[int] = ...) -> None: ...

class TurnFailure(_message.Message):
    __slots__ = ("turn_id", "error")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    error: str
    def __init__(self, turn_id: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class WorkerBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[WorkerMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[WorkerMessage, _Mapping]]] = ...) -> None: ...

class WorkerMessage(_message.Message):
    __slots__ = ("hello", "heartbeat", "event", "commit", "failure", "draining", "capacity", "batch")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    hello: WorkerHello
    heartbeat: WorkerHeartbeat
    event: TurnEvent
    commit: TurnCommit
    failure: TurnFailure
    draining: WorkerDraining
    capacity: WorkerCapacity
    batch: WorkerBatch
    def __init__(self, hello: _Optional[_Union[WorkerHello, _Mapping]] = ..., heartbeat: _Optional[_Union[WorkerHeartbeat, _Mapping]] = ..., event: _Optional[_Union[TurnEvent, _Mapping]] = ..., commit: _Optional[_Union[TurnCommit, _Mapping]] = ..., failure: _Optional[_Union[TurnFailure, _Mapping]] = ..., draining: _Optional[_Union[WorkerDraining, _Mapping]] = ..., capacity: _Optional[_Union[WorkerCapacity, _Mapping]] = ..., batch: _Optional[_Union[WorkerBatch, _Mapping]] = ...) -> None: ...

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
    call: LifecycleCall
    process: _common_pb2.ThinkProcess
    pending: _containers.RepeatedCompositeFieldContainer[_common_pb2.SteerMessage]
    lease_deadline_ms: int
    chat_count: int
    recent_chat: _containers.RepeatedCompositeFieldContainer[_common_pb2.ChatMessage]
    project_memory_included: bool
    project_memory: _containers.RepeatedCompositeFieldContainer[MemoryRecord]
    recent_chat_held: bool
    trace_context: _containers.ScalarMap[str, str]
    def __init__(self, turn_id: _Optional[str] = ..., attempt: _Optional[int] = ..., call: _Optional[_Union[LifecycleCall, str]] = ..., process: _Optional[_Union[_common_pb2.ThinkProcess, _Mapping]] = ..., pending: _Optional[_Iterable[_Union[_common_pb2.SteerMessage, _Mapping]]] = ..., lease_deadline_ms: _Optional[int] = ..., chat_count: _Optional[int] = ..., recent_chat: _Optional[_Iterable[_Union[_common_pb2.ChatMessage, _Mapping]]] = ..., project_memory_included: _Optional[bool] = ..., project_memory: _Optional[_Iterable[_Union[MemoryRecord, _Mapping]]] = ..., recent_chat_held: _Optional[bool] = ..., trace_context: _Optional[_Mapping[str, str]] = ...) -> None: ...

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

class DispatchBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[DispatchMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[DispatchMessage, _Mapping]]] = ...) -> None: ...

class DispatchMessage(_message.Message):
    __slots__ = ("welcome", "assignment", "commit_ack", "cancel_turn_id", "batch")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    COMMIT_ACK_FIELD_NUMBER: _ClassVar[int]
    CANCEL_TURN_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    assignment: TurnAssignment
    commit_ack: TurnAck
    cancel_turn_id: str
    batch: DispatchBatch
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., assignment: _Optional[_Union[TurnAssignment, _Mapping]] = ..., commit_ack: _Optional[_Union[TurnAck, _Mapping]] = ..., cancel_turn_id: _Optional[str] = ..., batch: _Optional[_Union[DispatchBatch, _Mapping]] = ...) -> None: ...

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
