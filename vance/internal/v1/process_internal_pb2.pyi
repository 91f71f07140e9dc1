from google.protobuf import struct_pb2 as _struct_pb2
from vance.v1 import common_pb2 as _common_pb2
from vance.v1 import process_pb2 as _process_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

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

class RespawnChatRequest(_message.Message):
    __slots__ = ("process", "history_from_process_id")
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FROM_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    process: CreateProcessRequest
    history_from_process_id: str
    def __init__(self, process: _Optional[_Union[CreateProcessRequest, _Mapping]] = ..., history_from_process_id: _Optional[str] = ...) -> None: ...

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
        value: _process_pb2.ListProcessesResponse
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_process_pb2.ListProcessesResponse, _Mapping]] = ...) -> None: ...
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.MessageMap[str, _process_pb2.ListProcessesResponse]
    def __init__(self, sessions: _Optional[_Mapping[str, _process_pb2.ListProcessesResponse]] = ...) -> None: ...

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

class ChatFeedRequest(_message.Message):
    __slots__ = ("after",)
    AFTER_FIELD_NUMBER: _ClassVar[int]
    after: int
    def __init__(self, after: _Optional[int] = ...) -> None: ...

class ChatFeedPage(_message.Message):
    __slots__ = ("position", "messages")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    position: int
    messages: _containers.RepeatedCompositeFieldContainer[_common_pb2.ChatMessage]
    def __init__(self, position: _Optional[int] = ..., messages: _Optional[_Iterable[_Union[_common_pb2.ChatMessage, _Mapping]]] = ...) -> None: ...

class AckChatFeedResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

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

class FollowSessionsRequest(_message.Message):
    __slots__ = ("add", "drop")
    ADD_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    add: _containers.RepeatedCompositeFieldContainer[SessionFollow]
    drop: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, add: _Optional[_Iterable[_Union[SessionFollow, _Mapping]]] = ..., drop: _Optional[_Iterable[int]] = ...) -> None: ...

class SessionFollow(_message.Message):
    __slots__ = ("key", "session_id", "since_seq")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_SEQ_FIELD_NUMBER: _ClassVar[int]
    key: int
    session_id: str
    since_seq: int
    def __init__(self, key: _Optional[int] = ..., session_id: _Optional[str] = ..., since_seq: _Optional[int] = ...) -> None: ...

class FollowSessionsReply(_message.Message):
    __slots__ = ("groups",)
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[FollowedEvents]
    def __init__(self, groups: _Optional[_Iterable[_Union[FollowedEvents, _Mapping]]] = ...) -> None: ...

class FollowedEvents(_message.Message):
    __slots__ = ("key", "events", "ended", "reason")
    KEY_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    key: int
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.SessionEvent]
    ended: bool
    reason: str
    def __init__(self, key: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_common_pb2.SessionEvent, _Mapping]]] = ..., ended: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class SteerStreamRequest(_message.Message):
    __slots__ = ("calls",)
    CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[SteerCall]
    def __init__(self, calls: _Optional[_Iterable[_Union[SteerCall, _Mapping]]] = ...) -> None: ...

class SteerCall(_message.Message):
    __slots__ = ("id", "token", "request", "timeout_ms")
    ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    id: int
    token: str
    request: _process_pb2.SteerRequest
    timeout_ms: int
    def __init__(self, id: _Optional[int] = ..., token: _Optional[str] = ..., request: _Optional[_Union[_process_pb2.SteerRequest, _Mapping]] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class SteerStreamReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[SteerCallResult]
    def __init__(self, results: _Optional[_Iterable[_Union[SteerCallResult, _Mapping]]] = ...) -> None: ...

class SteerCallResult(_message.Message):
    __slots__ = ("id", "reply", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    reply: _process_pb2.SteerResponse
    error: CallError
    def __init__(self, id: _Optional[int] = ..., reply: _Optional[_Union[_process_pb2.SteerResponse, _Mapping]] = ..., error: _Optional[_Union[CallError, _Mapping]] = ...) -> None: ...

class CallError(_message.Message):
    __slots__ = ("code", "message", "reason", "status")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    reason: str
    status: bytes
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., status: _Optional[bytes] = ...) -> None: ...
