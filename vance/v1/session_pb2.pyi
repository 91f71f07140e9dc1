from vance.v1 import common_pb2 as _common_pb2
from vance.v1 import recipe_pb2 as _recipe_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AccentColor(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACCENT_COLOR_UNSPECIFIED: _ClassVar[AccentColor]
    ACCENT_COLOR_SLATE: _ClassVar[AccentColor]
    ACCENT_COLOR_RED: _ClassVar[AccentColor]
    ACCENT_COLOR_ORANGE: _ClassVar[AccentColor]
    ACCENT_COLOR_AMBER: _ClassVar[AccentColor]
    ACCENT_COLOR_GREEN: _ClassVar[AccentColor]
    ACCENT_COLOR_TEAL: _ClassVar[AccentColor]
    ACCENT_COLOR_CYAN: _ClassVar[AccentColor]
    ACCENT_COLOR_BLUE: _ClassVar[AccentColor]
    ACCENT_COLOR_INDIGO: _ClassVar[AccentColor]
    ACCENT_COLOR_PURPLE: _ClassVar[AccentColor]
    ACCENT_COLOR_PINK: _ClassVar[AccentColor]
    ACCENT_COLOR_ROSE: _ClassVar[AccentColor]
ACCENT_COLOR_UNSPECIFIED: AccentColor
ACCENT_COLOR_SLATE: AccentColor
ACCENT_COLOR_RED: AccentColor
ACCENT_COLOR_ORANGE: AccentColor
ACCENT_COLOR_AMBER: AccentColor
ACCENT_COLOR_GREEN: AccentColor
ACCENT_COLOR_TEAL: AccentColor
ACCENT_COLOR_CYAN: AccentColor
ACCENT_COLOR_BLUE: AccentColor
ACCENT_COLOR_INDIGO: AccentColor
ACCENT_COLOR_PURPLE: AccentColor
ACCENT_COLOR_PINK: AccentColor
ACCENT_COLOR_ROSE: AccentColor

class User(_message.Message):
    __slots__ = ("tenant_id", "username", "roles", "created_at_ms")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    created_at_ms: int
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ..., created_at_ms: _Optional[int] = ...) -> None: ...

class GetUserRequest(_message.Message):
    __slots__ = ("tenant_id", "username")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ...) -> None: ...

class CreateUserRequest(_message.Message):
    __slots__ = ("tenant_id", "username", "password", "roles")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    password: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., password: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ...) -> None: ...

class Project(_message.Message):
    __slots__ = ("tenant_id", "project_id", "title", "kind", "created_at_ms", "owner_user_id", "group", "archived")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    title: str
    kind: _common_pb2.ProjectKind
    created_at_ms: int
    owner_user_id: str
    group: str
    archived: bool
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., title: _Optional[str] = ..., kind: _Optional[_Union[_common_pb2.ProjectKind, str]] = ..., created_at_ms: _Optional[int] = ..., owner_user_id: _Optional[str] = ..., group: _Optional[str] = ..., archived: _Optional[bool] = ...) -> None: ...

class GetProjectRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ...) -> None: ...

class CreateProjectRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "title", "kind", "owner_user_id", "group")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    title: str
    kind: _common_pb2.ProjectKind
    owner_user_id: str
    group: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., title: _Optional[str] = ..., kind: _Optional[_Union[_common_pb2.ProjectKind, str]] = ..., owner_user_id: _Optional[str] = ..., group: _Optional[str] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("session_id", "tenant_id", "project_id", "owner_user_id", "status", "chat_process_id", "chat_process_name", "chat_engine", "profile", "created_at_ms", "last_activity_at_ms", "engine_activity_at_ms", "metadata", "lifecycle", "lifecycle_sources", "bootstrap_recipe", "allow_multiple_clients", "bound_connection_id", "suspend_cause", "suspended_at_ms", "transition_at_ms", "close_reason", "closed_at_ms", "archived_at_ms", "reactivated_at_ms", "generation", "participant_count")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHAT_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    CHAT_ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTIVITY_AT_MS_FIELD_NUMBER: _ClassVar[int]
    ENGINE_ACTIVITY_AT_MS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_SOURCES_FIELD_NUMBER: _ClassVar[int]
    BOOTSTRAP_RECIPE_FIELD_NUMBER: _ClassVar[int]
    ALLOW_MULTIPLE_CLIENTS_FIELD_NUMBER: _ClassVar[int]
    BOUND_CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    SUSPEND_CAUSE_FIELD_NUMBER: _ClassVar[int]
    SUSPENDED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    TRANSITION_AT_MS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    CLOSED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    REACTIVATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANT_COUNT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    tenant_id: str
    project_id: str
    owner_user_id: str
    status: _common_pb2.SessionStatus
    chat_process_id: str
    chat_process_name: str
    chat_engine: str
    profile: str
    created_at_ms: int
    last_activity_at_ms: int
    engine_activity_at_ms: int
    metadata: SessionMetadata
    lifecycle: _recipe_pb2.LifecycleProperties
    lifecycle_sources: _recipe_pb2.LifecycleSources
    bootstrap_recipe: str
    allow_multiple_clients: bool
    bound_connection_id: str
    suspend_cause: _common_pb2.SuspendCause
    suspended_at_ms: int
    transition_at_ms: int
    close_reason: _common_pb2.CloseReason
    closed_at_ms: int
    archived_at_ms: int
    reactivated_at_ms: int
    generation: int
    participant_count: int
    def __init__(self, session_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.SessionStatus, str]] = ..., chat_process_id: _Optional[str] = ..., chat_process_name: _Optional[str] = ..., chat_engine: _Optional[str] = ..., profile: _Optional[str] = ..., created_at_ms: _Optional[int] = ..., last_activity_at_ms: _Optional[int] = ..., engine_activity_at_ms: _Optional[int] = ..., metadata: _Optional[_Union[SessionMetadata, _Mapping]] = ..., lifecycle: _Optional[_Union[_recipe_pb2.LifecycleProperties, _Mapping]] = ..., lifecycle_sources: _Optional[_Union[_recipe_pb2.LifecycleSources, _Mapping]] = ..., bootstrap_recipe: _Optional[str] = ..., allow_multiple_clients: _Optional[bool] = ..., bound_connection_id: _Optional[str] = ..., suspend_cause: _Optional[_Union[_common_pb2.SuspendCause, str]] = ..., suspended_at_ms: _Optional[int] = ..., transition_at_ms: _Optional[int] = ..., close_reason: _Optional[_Union[_common_pb2.CloseReason, str]] = ..., closed_at_ms: _Optional[int] = ..., archived_at_ms: _Optional[int] = ..., reactivated_at_ms: _Optional[int] = ..., generation: _Optional[int] = ..., participant_count: _Optional[int] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "owner_user_id", "profile", "autonomous", "chat_engine", "lifecycle", "allow_multiple_clients", "recipe", "connection_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    AUTONOMOUS_FIELD_NUMBER: _ClassVar[int]
    CHAT_ENGINE_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    ALLOW_MULTIPLE_CLIENTS_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    owner_user_id: str
    profile: str
    autonomous: bool
    chat_engine: str
    lifecycle: _recipe_pb2.LifecycleProperties
    allow_multiple_clients: bool
    recipe: str
    connection_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ..., profile: _Optional[str] = ..., autonomous: _Optional[bool] = ..., chat_engine: _Optional[str] = ..., lifecycle: _Optional[_Union[_recipe_pb2.LifecycleProperties, _Mapping]] = ..., allow_multiple_clients: _Optional[bool] = ..., recipe: _Optional[str] = ..., connection_id: _Optional[str] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "owner_user_id", "statuses", "tags", "include_archived", "caller", "limit")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    owner_user_id: str
    statuses: _containers.RepeatedScalarFieldContainer[_common_pb2.SessionStatus]
    tags: _containers.RepeatedScalarFieldContainer[str]
    include_archived: bool
    caller: Caller
    limit: int
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[_common_pb2.SessionStatus, str]]] = ..., tags: _Optional[_Iterable[str]] = ..., include_archived: _Optional[bool] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ...) -> None: ...

class Caller(_message.Message):
    __slots__ = ("user_id", "roles")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, user_id: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ...) -> None: ...

class BindSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id", "connection_id", "caller", "takeover")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    TAKEOVER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    connection_id: str
    caller: Caller
    takeover: bool
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ..., connection_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., takeover: _Optional[bool] = ...) -> None: ...

class BindSessionResponse(_message.Message):
    __slots__ = ("session", "bound", "resumed", "previous_connection_id")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    BOUND_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    session: Session
    bound: bool
    resumed: bool
    previous_connection_id: str
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., bound: _Optional[bool] = ..., resumed: _Optional[bool] = ..., previous_connection_id: _Optional[str] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ("session_id", "connection_id", "reclaim", "lease_ms")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    RECLAIM_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    connection_id: str
    reclaim: bool
    lease_ms: int
    def __init__(self, session_id: _Optional[str] = ..., connection_id: _Optional[str] = ..., reclaim: _Optional[bool] = ..., lease_ms: _Optional[int] = ...) -> None: ...

class HeartbeatResponse(_message.Message):
    __slots__ = ("ok", "reclaimed", "reason", "lease_ms")
    OK_FIELD_NUMBER: _ClassVar[int]
    RECLAIMED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    reclaimed: bool
    reason: str
    lease_ms: int
    def __init__(self, ok: _Optional[bool] = ..., reclaimed: _Optional[bool] = ..., reason: _Optional[str] = ..., lease_ms: _Optional[int] = ...) -> None: ...

class ReleaseBindRequest(_message.Message):
    __slots__ = ("session_id", "connection_id", "disconnect")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    connection_id: str
    disconnect: bool
    def __init__(self, session_id: _Optional[str] = ..., connection_id: _Optional[str] = ..., disconnect: _Optional[bool] = ...) -> None: ...

class SessionOpRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id", "caller", "profile")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    caller: Caller
    profile: str
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., profile: _Optional[str] = ...) -> None: ...

class SuspendSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id", "caller", "cause")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    caller: Caller
    cause: _common_pb2.SuspendCause
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., cause: _Optional[_Union[_common_pb2.SuspendCause, str]] = ...) -> None: ...

class ExtendSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id", "caller", "transition_at_ms", "extend_by_ms")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    TRANSITION_AT_MS_FIELD_NUMBER: _ClassVar[int]
    EXTEND_BY_MS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    caller: Caller
    transition_at_ms: int
    extend_by_ms: int
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., transition_at_ms: _Optional[int] = ..., extend_by_ms: _Optional[int] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class SessionMetadata(_message.Message):
    __slots__ = ("title", "title_auto_generated", "icon", "color", "tags", "pinned", "user_touched_at_ms")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TITLE_AUTO_GENERATED_FIELD_NUMBER: _ClassVar[int]
    ICON_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    USER_TOUCHED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    title: str
    title_auto_generated: bool
    icon: str
    color: AccentColor
    tags: _containers.RepeatedScalarFieldContainer[str]
    pinned: bool
    user_touched_at_ms: int
    def __init__(self, title: _Optional[str] = ..., title_auto_generated: _Optional[bool] = ..., icon: _Optional[str] = ..., color: _Optional[_Union[AccentColor, str]] = ..., tags: _Optional[_Iterable[str]] = ..., pinned: _Optional[bool] = ..., user_touched_at_ms: _Optional[int] = ...) -> None: ...

class TagList(_message.Message):
    __slots__ = ("tags",)
    TAGS_FIELD_NUMBER: _ClassVar[int]
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tags: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateMetadataRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id", "caller", "title", "icon", "color", "tags", "pinned")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ICON_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    caller: Caller
    title: str
    icon: str
    color: str
    tags: TagList
    pinned: bool
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., title: _Optional[str] = ..., icon: _Optional[str] = ..., color: _Optional[str] = ..., tags: _Optional[_Union[TagList, _Mapping]] = ..., pinned: _Optional[bool] = ...) -> None: ...

class SearchSessionsRequest(_message.Message):
    __slots__ = ("tenant_id", "caller", "query", "project_id", "owner_user_id", "statuses", "tags", "include_archived", "limit")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    caller: Caller
    query: str
    project_id: str
    owner_user_id: str
    statuses: _containers.RepeatedScalarFieldContainer[_common_pb2.SessionStatus]
    tags: _containers.RepeatedScalarFieldContainer[str]
    include_archived: bool
    limit: int
    def __init__(self, tenant_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., query: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[_common_pb2.SessionStatus, str]]] = ..., tags: _Optional[_Iterable[str]] = ..., include_archived: _Optional[bool] = ..., limit: _Optional[int] = ...) -> None: ...

class TextRange(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class MessageSnippet(_message.Message):
    __slots__ = ("message_id", "process_name", "role", "created_at_ms", "text", "highlights")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    HIGHLIGHTS_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    process_name: str
    role: _common_pb2.ChatRole
    created_at_ms: int
    text: str
    highlights: _containers.RepeatedCompositeFieldContainer[TextRange]
    def __init__(self, message_id: _Optional[str] = ..., process_name: _Optional[str] = ..., role: _Optional[_Union[_common_pb2.ChatRole, str]] = ..., created_at_ms: _Optional[int] = ..., text: _Optional[str] = ..., highlights: _Optional[_Iterable[_Union[TextRange, _Mapping]]] = ...) -> None: ...

class SessionHit(_message.Message):
    __slots__ = ("session", "score", "title_match", "tag_match", "conversation_match", "snippets")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TITLE_MATCH_FIELD_NUMBER: _ClassVar[int]
    TAG_MATCH_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_MATCH_FIELD_NUMBER: _ClassVar[int]
    SNIPPETS_FIELD_NUMBER: _ClassVar[int]
    session: Session
    score: int
    title_match: bool
    tag_match: bool
    conversation_match: bool
    snippets: _containers.RepeatedCompositeFieldContainer[MessageSnippet]
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., score: _Optional[int] = ..., title_match: _Optional[bool] = ..., tag_match: _Optional[bool] = ..., conversation_match: _Optional[bool] = ..., snippets: _Optional[_Iterable[_Union[MessageSnippet, _Mapping]]] = ...) -> None: ...

class SearchSessionsResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SessionHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[SessionHit, _Mapping]]] = ...) -> None: ...

class GetSettingsRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "caller")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    caller: Caller
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ...) -> None: ...

class UpdateSettingsRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "caller", "set", "unset")
    class SetEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    UNSET_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    caller: Caller
    set: _containers.ScalarMap[str, str]
    unset: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., set: _Optional[_Mapping[str, str]] = ..., unset: _Optional[_Iterable[str]] = ...) -> None: ...

class Settings(_message.Message):
    __slots__ = ("tenant_id", "project_id", "values", "effective")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class EffectiveEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    values: _containers.ScalarMap[str, str]
    effective: _containers.ScalarMap[str, str]
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., values: _Optional[_Mapping[str, str]] = ..., effective: _Optional[_Mapping[str, str]] = ...) -> None: ...

class OpenHubSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "username", "connection_id", "profile")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    connection_id: str
    profile: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., connection_id: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class ListProjectsRequest(_message.Message):
    __slots__ = ("tenant_id", "caller", "kind", "include_archived")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    caller: Caller
    kind: str
    include_archived: bool
    def __init__(self, tenant_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., kind: _Optional[str] = ..., include_archived: _Optional[bool] = ...) -> None: ...

class ListProjectsResponse(_message.Message):
    __slots__ = ("projects",)
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    projects: _containers.RepeatedCompositeFieldContainer[Project]
    def __init__(self, projects: _Optional[_Iterable[_Union[Project, _Mapping]]] = ...) -> None: ...

class ProjectOpRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "caller")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    caller: Caller
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ...) -> None: ...

class DeleteProjectResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class GetUserSettingRequest(_message.Message):
    __slots__ = ("tenant_id", "username", "key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    key: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class UserSetting(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class InboxItem(_message.Message):
    __slots__ = ("id", "tenant_id", "user_id", "title", "body", "source_process_id", "source_session_id", "created_at_ms", "read", "answered", "answer", "requires_answer", "idempotency_key")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_ANSWER_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    user_id: str
    title: str
    body: str
    source_process_id: str
    source_session_id: str
    created_at_ms: int
    read: bool
    answered: bool
    answer: str
    requires_answer: bool
    idempotency_key: str
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., user_id: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., source_process_id: _Optional[str] = ..., source_session_id: _Optional[str] = ..., created_at_ms: _Optional[int] = ..., read: _Optional[bool] = ..., answered: _Optional[bool] = ..., answer: _Optional[str] = ..., requires_answer: _Optional[bool] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListInboxItemsRequest(_message.Message):
    __slots__ = ("tenant_id", "user_id", "unread_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    UNREAD_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    user_id: str
    unread_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., user_id: _Optional[str] = ..., unread_only: _Optional[bool] = ...) -> None: ...

class ListInboxItemsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[InboxItem]
    def __init__(self, items: _Optional[_Iterable[_Union[InboxItem, _Mapping]]] = ...) -> None: ...

class InboxItemRef(_message.Message):
    __slots__ = ("tenant_id", "user_id", "item_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    user_id: str
    item_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., user_id: _Optional[str] = ..., item_id: _Optional[str] = ...) -> None: ...

class MarkInboxItemRequest(_message.Message):
    __slots__ = ("ref", "read")
    REF_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    ref: InboxItemRef
    read: bool
    def __init__(self, ref: _Optional[_Union[InboxItemRef, _Mapping]] = ..., read: _Optional[bool] = ...) -> None: ...

class AnswerInboxItemRequest(_message.Message):
    __slots__ = ("ref", "answer")
    REF_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    ref: InboxItemRef
    answer: str
    def __init__(self, ref: _Optional[_Union[InboxItemRef, _Mapping]] = ..., answer: _Optional[str] = ...) -> None: ...
