from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProcessStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROCESS_STATUS_UNSPECIFIED: _ClassVar[ProcessStatus]
    PROCESS_STATUS_INIT: _ClassVar[ProcessStatus]
    PROCESS_STATUS_RUNNING: _ClassVar[ProcessStatus]
    PROCESS_STATUS_IDLE: _ClassVar[ProcessStatus]
    PROCESS_STATUS_BLOCKED: _ClassVar[ProcessStatus]
    PROCESS_STATUS_PAUSED: _ClassVar[ProcessStatus]
    PROCESS_STATUS_SUSPENDED: _ClassVar[ProcessStatus]
    PROCESS_STATUS_CLOSED: _ClassVar[ProcessStatus]

class CloseReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOSE_REASON_UNSPECIFIED: _ClassVar[CloseReason]
    CLOSE_REASON_DONE: _ClassVar[CloseReason]
    CLOSE_REASON_INCOMPLETE: _ClassVar[CloseReason]
    CLOSE_REASON_STOPPED: _ClassVar[CloseReason]
    CLOSE_REASON_STALE: _ClassVar[CloseReason]
    CLOSE_REASON_ARCHIVED: _ClassVar[CloseReason]
    CLOSE_REASON_USER_DELETE: _ClassVar[CloseReason]
    CLOSE_REASON_ABANDONED: _ClassVar[CloseReason]
    CLOSE_REASON_AUTO_CLOSE: _ClassVar[CloseReason]

class SessionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATUS_UNSPECIFIED: _ClassVar[SessionStatus]
    SESSION_STATUS_INIT: _ClassVar[SessionStatus]
    SESSION_STATUS_RUNNING: _ClassVar[SessionStatus]
    SESSION_STATUS_IDLE: _ClassVar[SessionStatus]
    SESSION_STATUS_SUSPENDED: _ClassVar[SessionStatus]
    SESSION_STATUS_ARCHIVED: _ClassVar[SessionStatus]
    SESSION_STATUS_CLOSED: _ClassVar[SessionStatus]

class SuspendCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUSPEND_CAUSE_UNSPECIFIED: _ClassVar[SuspendCause]
    SUSPEND_CAUSE_IDLE: _ClassVar[SuspendCause]
    SUSPEND_CAUSE_DISCONNECT: _ClassVar[SuspendCause]
    SUSPEND_CAUSE_FORCED: _ClassVar[SuspendCause]

class ProcessEventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROCESS_EVENT_TYPE_UNSPECIFIED: _ClassVar[ProcessEventType]
    PROCESS_EVENT_TYPE_STARTED: _ClassVar[ProcessEventType]
    PROCESS_EVENT_TYPE_BLOCKED: _ClassVar[ProcessEventType]
    PROCESS_EVENT_TYPE_DONE: _ClassVar[ProcessEventType]
    PROCESS_EVENT_TYPE_FAILED: _ClassVar[ProcessEventType]
    PROCESS_EVENT_TYPE_STOPPED: _ClassVar[ProcessEventType]
    PROCESS_EVENT_TYPE_SUMMARY: _ClassVar[ProcessEventType]

class ToolCallStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_CALL_STATUS_UNSPECIFIED: _ClassVar[ToolCallStatus]
    TOOL_CALL_STATUS_SUCCESS: _ClassVar[ToolCallStatus]
    TOOL_CALL_STATUS_ERROR: _ClassVar[ToolCallStatus]
    TOOL_CALL_STATUS_TIMEOUT: _ClassVar[ToolCallStatus]

class ProjectKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROJECT_KIND_UNSPECIFIED: _ClassVar[ProjectKind]
    PROJECT_KIND_NORMAL: _ClassVar[ProjectKind]
    PROJECT_KIND_SYSTEM: _ClassVar[ProjectKind]

class ChatRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHAT_ROLE_UNSPECIFIED: _ClassVar[ChatRole]
    CHAT_ROLE_USER: _ClassVar[ChatRole]
    CHAT_ROLE_ASSISTANT: _ClassVar[ChatRole]
    CHAT_ROLE_SYSTEM: _ClassVar[ChatRole]

class DeliveryOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DELIVERY_OUTCOME_UNSPECIFIED: _ClassVar[DeliveryOutcome]
    DELIVERY_OUTCOME_STARTED: _ClassVar[DeliveryOutcome]
    DELIVERY_OUTCOME_QUEUED: _ClassVar[DeliveryOutcome]
    DELIVERY_OUTCOME_DEFERRED: _ClassVar[DeliveryOutcome]
    DELIVERY_OUTCOME_REJECTED: _ClassVar[DeliveryOutcome]

class PeerEventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PEER_EVENT_TYPE_UNSPECIFIED: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_PROJECT_CREATED: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_PROJECT_ARCHIVED: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_PROCESS_SPAWNED: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_PROCESS_BLOCKED: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_PROCESS_CHANGED: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_USER_STATEMENT: _ClassVar[PeerEventType]
    PEER_EVENT_TYPE_STATUS: _ClassVar[PeerEventType]
PROCESS_STATUS_UNSPECIFIED: ProcessStatus
PROCESS_STATUS_INIT: ProcessStatus
PROCESS_STATUS_RUNNING: ProcessStatus
PROCESS_STATUS_IDLE: ProcessStatus
PROCESS_STATUS_BLOCKED: ProcessStatus
PROCESS_STATUS_PAUSED: ProcessStatus
PROCESS_STATUS_SUSPENDED: ProcessStatus
PROCESS_STATUS_CLOSED: ProcessStatus
CLOSE_REASON_UNSPECIFIED: CloseReason
CLOSE_REASON_DONE: CloseReason
CLOSE_REASON_INCOMPLETE: CloseReason
CLOSE_REASON_STOPPED: CloseReason
CLOSE_REASON_STALE: CloseReason
CLOSE_REASON_ARCHIVED: CloseReason
CLOSE_REASON_USER_DELETE: CloseReason
CLOSE_REASON_ABANDONED: CloseReason
CLOSE_REASON_AUTO_CLOSE: CloseReason
SESSION_STATUS_UNSPECIFIED: SessionStatus
SESSION_STATUS_INIT: SessionStatus
SESSION_STATUS_RUNNING: SessionStatus
SESSION_STATUS_IDLE: SessionStatus
SESSION_STATUS_SUSPENDED: SessionStatus
SESSION_STATUS_ARCHIVED: SessionStatus
SESSION_STATUS_CLOSED: SessionStatus
SUSPEND_CAUSE_UNSPECIFIED: SuspendCause
SUSPEND_CAUSE_IDLE: SuspendCause
SUSPEND_CAUSE_DISCONNECT: SuspendCause
SUSPEND_CAUSE_FORCED: SuspendCause
PROCESS_EVENT_TYPE_UNSPECIFIED: ProcessEventType
PROCESS_EVENT_TYPE_STARTED: ProcessEventType
PROCESS_EVENT_TYPE_BLOCKED: ProcessEventType
PROCESS_EVENT_TYPE_DONE: ProcessEventType
PROCESS_EVENT_TYPE_FAILED: ProcessEventType
PROCESS_EVENT_TYPE_STOPPED: ProcessEventType
PROCESS_EVENT_TYPE_SUMMARY: ProcessEventType
TOOL_CALL_STATUS_UNSPECIFIED: ToolCallStatus
TOOL_CALL_STATUS_SUCCESS: ToolCallStatus
TOOL_CALL_STATUS_ERROR: ToolCallStatus
TOOL_CALL_STATUS_TIMEOUT: ToolCallStatus
PROJECT_KIND_UNSPECIFIED: ProjectKind
PROJECT_KIND_NORMAL: ProjectKind
PROJECT_KIND_SYSTEM: ProjectKind
CHAT_ROLE_UNSPECIFIED: ChatRole
CHAT_ROLE_USER: ChatRole
CHAT_ROLE_ASSISTANT: ChatRole
CHAT_ROLE_SYSTEM: ChatRole
DELIVERY_OUTCOME_UNSPECIFIED: DeliveryOutcome
DELIVERY_OUTCOME_STARTED: DeliveryOutcome
DELIVERY_OUTCOME_QUEUED: DeliveryOutcome
DELIVERY_OUTCOME_DEFERRED: DeliveryOutcome
DELIVERY_OUTCOME_REJECTED: DeliveryOutcome
PEER_EVENT_TYPE_UNSPECIFIED: PeerEventType
PEER_EVENT_TYPE_PROJECT_CREATED: PeerEventType
PEER_EVENT_TYPE_PROJECT_ARCHIVED: PeerEventType
PEER_EVENT_TYPE_PROCESS_SPAWNED: PeerEventType
PEER_EVENT_TYPE_PROCESS_BLOCKED: PeerEventType
PEER_EVENT_TYPE_PROCESS_CHANGED: PeerEventType
PEER_EVENT_TYPE_USER_STATEMENT: PeerEventType
PEER_EVENT_TYPE_STATUS: PeerEventType

class UserChatInput(_message.Message):
    __slots__ = ("from_user", "content", "ask_id", "forwarded_by")
    FROM_USER_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ASK_ID_FIELD_NUMBER: _ClassVar[int]
    FORWARDED_BY_FIELD_NUMBER: _ClassVar[int]
    from_user: str
    content: str
    ask_id: str
    forwarded_by: _struct_pb2.Struct
    def __init__(self, from_user: _Optional[str] = ..., content: _Optional[str] = ..., ask_id: _Optional[str] = ..., forwarded_by: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ProcessEvent(_message.Message):
    __slots__ = ("source_process_id", "type", "human_summary", "payload", "source_process_name")
    SOURCE_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    HUMAN_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    source_process_id: str
    type: ProcessEventType
    human_summary: str
    payload: _struct_pb2.Struct
    source_process_name: str
    def __init__(self, source_process_id: _Optional[str] = ..., type: _Optional[_Union[ProcessEventType, str]] = ..., human_summary: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source_process_name: _Optional[str] = ...) -> None: ...

class Reply(_message.Message):
    __slots__ = ("in_reply_to", "content")
    IN_REPLY_TO_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    in_reply_to: str
    content: str
    def __init__(self, in_reply_to: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "status", "result", "error")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    status: ToolCallStatus
    result: _struct_pb2.Value
    error: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., status: _Optional[_Union[ToolCallStatus, str]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class ExternalCommand(_message.Message):
    __slots__ = ("command", "params")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    command: str
    params: _struct_pb2.Struct
    def __init__(self, command: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class InboxAnswer(_message.Message):
    __slots__ = ("inbox_item_id", "answer")
    INBOX_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    inbox_item_id: str
    answer: _struct_pb2.Value
    def __init__(self, inbox_item_id: _Optional[str] = ..., answer: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class PeerEvent(_message.Message):
    __slots__ = ("source_session_id", "payload", "user_id", "type", "human_summary")
    SOURCE_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    HUMAN_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    source_session_id: str
    payload: _struct_pb2.Struct
    user_id: str
    type: PeerEventType
    human_summary: str
    def __init__(self, source_session_id: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., user_id: _Optional[str] = ..., type: _Optional[_Union[PeerEventType, str]] = ..., human_summary: _Optional[str] = ...) -> None: ...

class SteerMessage(_message.Message):
    __slots__ = ("id", "idempotency_key", "at_ms", "target_process_id", "sender_process_id", "user_chat_input", "process_event", "reply", "tool_result", "external_command", "inbox_answer", "peer_event")
    ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    AT_MS_FIELD_NUMBER: _ClassVar[int]
    TARGET_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SENDER_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    USER_CHAT_INPUT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_EVENT_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_COMMAND_FIELD_NUMBER: _ClassVar[int]
    INBOX_ANSWER_FIELD_NUMBER: _ClassVar[int]
    PEER_EVENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    idempotency_key: str
    at_ms: int
    target_process_id: str
    sender_process_id: str
    user_chat_input: UserChatInput
    process_event: ProcessEvent
    reply: Reply
    tool_result: ToolResult
    external_command: ExternalCommand
    inbox_answer: InboxAnswer
    peer_event: PeerEvent
    def __init__(self, id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., at_ms: _Optional[int] = ..., target_process_id: _Optional[str] = ..., sender_process_id: _Optional[str] = ..., user_chat_input: _Optional[_Union[UserChatInput, _Mapping]] = ..., process_event: _Optional[_Union[ProcessEvent, _Mapping]] = ..., reply: _Optional[_Union[Reply, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., external_command: _Optional[_Union[ExternalCommand, _Mapping]] = ..., inbox_answer: _Optional[_Union[InboxAnswer, _Mapping]] = ..., peer_event: _Optional[_Union[PeerEvent, _Mapping]] = ...) -> None: ...

class ThinkProcess(_message.Message):
    __slots__ = ("id", "tenant_id", "project_id", "session_id", "name", "title", "goal", "engine", "engine_version", "recipe_name", "parent_process_id", "status", "close_reason", "close_detail", "recipe_snapshot", "params", "created_at_ms", "updated_at_ms", "owner_user_id", "pending_count", "chat_history_summary", "chat_history_summary_through", "last_suspend_cause", "persistent_tool_calls", "connection_profile")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    RECIPE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARENT_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    CLOSE_DETAIL_FIELD_NUMBER: _ClassVar[int]
    RECIPE_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    PENDING_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CHAT_HISTORY_SUMMARY_THROUGH_FIELD_NUMBER: _ClassVar[int]
    LAST_SUSPEND_CAUSE_FIELD_NUMBER: _ClassVar[int]
    PERSISTENT_TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_PROFILE_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    project_id: str
    session_id: str
    name: str
    title: str
    goal: str
    engine: str
    engine_version: str
    recipe_name: str
    parent_process_id: str
    status: ProcessStatus
    close_reason: CloseReason
    close_detail: str
    recipe_snapshot: _struct_pb2.Struct
    params: _struct_pb2.Struct
    created_at_ms: int
    updated_at_ms: int
    owner_user_id: str
    pending_count: int
    chat_history_summary: str
    chat_history_summary_through: int
    last_suspend_cause: str
    persistent_tool_calls: int
    connection_profile: str
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., session_id: _Optional[str] = ..., name: _Optional[str] = ..., title: _Optional[str] = ..., goal: _Optional[str] = ..., engine: _Optional[str] = ..., engine_version: _Optional[str] = ..., recipe_name: _Optional[str] = ..., parent_process_id: _Optional[str] = ..., status: _Optional[_Union[ProcessStatus, str]] = ..., close_reason: _Optional[_Union[CloseReason, str]] = ..., close_detail: _Optional[str] = ..., recipe_snapshot: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., created_at_ms: _Optional[int] = ..., updated_at_ms: _Optional[int] = ..., owner_user_id: _Optional[str] = ..., pending_count: _Optional[int] = ..., chat_history_summary: _Optional[str] = ..., chat_history_summary_through: _Optional[int] = ..., last_suspend_cause: _Optional[str] = ..., persistent_tool_calls: _Optional[int] = ..., connection_profile: _Optional[str] = ...) -> None: ...

class ChatMessage(_message.Message):
    __slots__ = ("id", "session_id", "think_process_id", "process_name", "role", "content", "created_at_ms", "meta")
    ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    THINK_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    META_FIELD_NUMBER: _ClassVar[int]
    id: str
    session_id: str
    think_process_id: str
    process_name: str
    role: ChatRole
    content: str
    created_at_ms: int
    meta: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., session_id: _Optional[str] = ..., think_process_id: _Optional[str] = ..., process_name: _Optional[str] = ..., role: _Optional[_Union[ChatRole, str]] = ..., content: _Optional[str] = ..., created_at_ms: _Optional[int] = ..., meta: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class SessionEvent(_message.Message):
    __slots__ = ("session_id", "seq", "at_ms", "chat_message_appended", "stream_chunk", "process_status_changed", "process_progress", "notice")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    AT_MS_FIELD_NUMBER: _ClassVar[int]
    CHAT_MESSAGE_APPENDED_FIELD_NUMBER: _ClassVar[int]
    STREAM_CHUNK_FIELD_NUMBER: _ClassVar[int]
    PROCESS_STATUS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    PROCESS_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    seq: int
    at_ms: int
    chat_message_appended: ChatMessage
    stream_chunk: StreamChunk
    process_status_changed: ProcessStatusChanged
    process_progress: ProcessProgress
    notice: Notice
    def __init__(self, session_id: _Optional[str] = ..., seq: _Optional[int] = ..., at_ms: _Optional[int] = ..., chat_message_appended: _Optional[_Union[ChatMessage, _Mapping]] = ..., stream_chunk: _Optional[_Union[StreamChunk, _Mapping]] = ..., process_status_changed: _Optional[_Union[ProcessStatusChanged, _Mapping]] = ..., process_progress: _Optional[_Union[ProcessProgress, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ...) -> None: ...

class StreamChunk(_message.Message):
    __slots__ = ("think_process_id", "process_name", "role", "chunk")
    THINK_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    think_process_id: str
    process_name: str
    role: ChatRole
    chunk: str
    def __init__(self, think_process_id: _Optional[str] = ..., process_name: _Optional[str] = ..., role: _Optional[_Union[ChatRole, str]] = ..., chunk: _Optional[str] = ...) -> None: ...

class ProcessStatusChanged(_message.Message):
    __slots__ = ("think_process_id", "process_name", "engine", "from_status", "to_status", "close_reason", "parent_process_id", "close_detail")
    THINK_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    FROM_STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_STATUS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    PARENT_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    CLOSE_DETAIL_FIELD_NUMBER: _ClassVar[int]
    think_process_id: str
    process_name: str
    engine: str
    from_status: ProcessStatus
    to_status: ProcessStatus
    close_reason: CloseReason
    parent_process_id: str
    close_detail: str
    def __init__(self, think_process_id: _Optional[str] = ..., process_name: _Optional[str] = ..., engine: _Optional[str] = ..., from_status: _Optional[_Union[ProcessStatus, str]] = ..., to_status: _Optional[_Union[ProcessStatus, str]] = ..., close_reason: _Optional[_Union[CloseReason, str]] = ..., parent_process_id: _Optional[str] = ..., close_detail: _Optional[str] = ...) -> None: ...

class ProcessProgress(_message.Message):
    __slots__ = ("think_process_id", "process_name", "engine", "parent_process_id", "kind", "payload")
    THINK_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PARENT_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    think_process_id: str
    process_name: str
    engine: str
    parent_process_id: str
    kind: str
    payload: _struct_pb2.Struct
    def __init__(self, think_process_id: _Optional[str] = ..., process_name: _Optional[str] = ..., engine: _Optional[str] = ..., parent_process_id: _Optional[str] = ..., kind: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("type", "data")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    type: str
    data: _struct_pb2.Struct
    def __init__(self, type: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
