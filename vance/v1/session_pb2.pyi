from vance.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

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

class AuthenticateRequest(_message.Message):
    __slots__ = ("tenant_id", "username", "password")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    password: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., password: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("tenant_id", "project_id", "title", "kind", "created_at_ms")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    title: str
    kind: _common_pb2.ProjectKind
    created_at_ms: int
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., title: _Optional[str] = ..., kind: _Optional[_Union[_common_pb2.ProjectKind, str]] = ..., created_at_ms: _Optional[int] = ...) -> None: ...

class GetProjectRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ...) -> None: ...

class CreateProjectRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "title", "kind")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    title: str
    kind: _common_pb2.ProjectKind
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., title: _Optional[str] = ..., kind: _Optional[_Union[_common_pb2.ProjectKind, str]] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("session_id", "tenant_id", "project_id", "owner_user_id", "status", "chat_process_id", "chat_process_name", "chat_engine", "profile", "created_at_ms", "last_activity_at_ms")
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
    def __init__(self, session_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.SessionStatus, str]] = ..., chat_process_id: _Optional[str] = ..., chat_process_name: _Optional[str] = ..., chat_engine: _Optional[str] = ..., profile: _Optional[str] = ..., created_at_ms: _Optional[int] = ..., last_activity_at_ms: _Optional[int] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "owner_user_id", "profile", "autonomous", "chat_engine")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    AUTONOMOUS_FIELD_NUMBER: _ClassVar[int]
    CHAT_ENGINE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    owner_user_id: str
    profile: str
    autonomous: bool
    chat_engine: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ..., profile: _Optional[str] = ..., autonomous: _Optional[bool] = ..., chat_engine: _Optional[str] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("tenant_id", "session_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    session_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "owner_user_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    owner_user_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., owner_user_id: _Optional[str] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ...) -> None: ...
