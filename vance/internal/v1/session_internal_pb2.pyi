from vance.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SettingLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SETTING_LEVEL_UNSPECIFIED: _ClassVar[SettingLevel]
    SETTING_LEVEL_PROCESS: _ClassVar[SettingLevel]
    SETTING_LEVEL_SESSION: _ClassVar[SettingLevel]
    SETTING_LEVEL_PROJECT: _ClassVar[SettingLevel]
    SETTING_LEVEL_TENANT: _ClassVar[SettingLevel]
    SETTING_LEVEL_GROUP: _ClassVar[SettingLevel]
SETTING_LEVEL_UNSPECIFIED: SettingLevel
SETTING_LEVEL_PROCESS: SettingLevel
SETTING_LEVEL_SESSION: SettingLevel
SETTING_LEVEL_PROJECT: SettingLevel
SETTING_LEVEL_TENANT: SettingLevel
SETTING_LEVEL_GROUP: SettingLevel

class AuthenticateRequest(_message.Message):
    __slots__ = ("tenant_id", "username", "password")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    password: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., password: _Optional[str] = ...) -> None: ...

class RenewBindLeasesRequest(_message.Message):
    __slots__ = ("beats",)
    BEATS_FIELD_NUMBER: _ClassVar[int]
    beats: _containers.RepeatedCompositeFieldContainer[_session_pb2.HeartbeatRequest]
    def __init__(self, beats: _Optional[_Iterable[_Union[_session_pb2.HeartbeatRequest, _Mapping]]] = ...) -> None: ...

class RenewBindLeasesResponse(_message.Message):
    __slots__ = ("beats",)
    BEATS_FIELD_NUMBER: _ClassVar[int]
    beats: _containers.RepeatedCompositeFieldContainer[_session_pb2.HeartbeatResponse]
    def __init__(self, beats: _Optional[_Iterable[_Union[_session_pb2.HeartbeatResponse, _Mapping]]] = ...) -> None: ...

class BindRoundRequest(_message.Message):
    __slots__ = ("replica_id", "lease_ms", "since_ms", "applied_ms")
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    APPLIED_MS_FIELD_NUMBER: _ClassVar[int]
    replica_id: str
    lease_ms: int
    since_ms: int
    applied_ms: int
    def __init__(self, replica_id: _Optional[str] = ..., lease_ms: _Optional[int] = ..., since_ms: _Optional[int] = ..., applied_ms: _Optional[int] = ...) -> None: ...

class BindDrop(_message.Message):
    __slots__ = ("drop_id", "session_id")
    DROP_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    drop_id: str
    session_id: str
    def __init__(self, drop_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class BindRoundResponse(_message.Message):
    __slots__ = ("lease_ms", "drops", "read_at_ms")
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    DROPS_FIELD_NUMBER: _ClassVar[int]
    READ_AT_MS_FIELD_NUMBER: _ClassVar[int]
    lease_ms: int
    drops: _containers.RepeatedCompositeFieldContainer[BindDrop]
    read_at_ms: int
    def __init__(self, lease_ms: _Optional[int] = ..., drops: _Optional[_Iterable[_Union[BindDrop, _Mapping]]] = ..., read_at_ms: _Optional[int] = ...) -> None: ...

class RunSweepsRequest(_message.Message):
    __slots__ = ("now_ms", "only_session_ids")
    NOW_MS_FIELD_NUMBER: _ClassVar[int]
    ONLY_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    now_ms: int
    only_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, now_ms: _Optional[int] = ..., only_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RunSweepsResponse(_message.Message):
    __slots__ = ("looked_at", "idle_suspended", "archived", "auto_closed", "abandoned", "unbound", "resumed", "skipped", "duration_us")
    LOOKED_AT_FIELD_NUMBER: _ClassVar[int]
    IDLE_SUSPENDED_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    AUTO_CLOSED_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    UNBOUND_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    DURATION_US_FIELD_NUMBER: _ClassVar[int]
    looked_at: int
    idle_suspended: int
    archived: int
    auto_closed: int
    abandoned: int
    unbound: int
    resumed: int
    skipped: _containers.RepeatedScalarFieldContainer[str]
    duration_us: int
    def __init__(self, looked_at: _Optional[int] = ..., idle_suspended: _Optional[int] = ..., archived: _Optional[int] = ..., auto_closed: _Optional[int] = ..., abandoned: _Optional[int] = ..., unbound: _Optional[int] = ..., resumed: _Optional[int] = ..., skipped: _Optional[_Iterable[str]] = ..., duration_us: _Optional[int] = ...) -> None: ...

class RestartForcedRequest(_message.Message):
    __slots__ = ("max_concurrent", "delay_between_ms", "only_session_ids")
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    DELAY_BETWEEN_MS_FIELD_NUMBER: _ClassVar[int]
    ONLY_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    max_concurrent: int
    delay_between_ms: int
    only_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, max_concurrent: _Optional[int] = ..., delay_between_ms: _Optional[int] = ..., only_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class SettingScope(_message.Message):
    __slots__ = ("tenant_id", "project_id", "session_id", "process_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    session_id: str
    process_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., session_id: _Optional[str] = ..., process_id: _Optional[str] = ...) -> None: ...

class EngineSettingValue(_message.Message):
    __slots__ = ("key", "value", "level")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    level: SettingLevel
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., level: _Optional[_Union[SettingLevel, str]] = ...) -> None: ...

class ResolveEngineSettingsRequest(_message.Message):
    __slots__ = ("scope", "keys")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    scope: SettingScope
    keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scope: _Optional[_Union[SettingScope, _Mapping]] = ..., keys: _Optional[_Iterable[str]] = ...) -> None: ...

class EngineSettings(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[EngineSettingValue]
    def __init__(self, values: _Optional[_Iterable[_Union[EngineSettingValue, _Mapping]]] = ...) -> None: ...

class SetEngineSettingRequest(_message.Message):
    __slots__ = ("scope", "level", "key", "value")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    scope: SettingScope
    level: SettingLevel
    key: str
    value: str
    def __init__(self, scope: _Optional[_Union[SettingScope, _Mapping]] = ..., level: _Optional[_Union[SettingLevel, str]] = ..., key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class WatchSettingsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SettingsChange(_message.Message):
    __slots__ = ("generation",)
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    generation: int
    def __init__(self, generation: _Optional[int] = ...) -> None: ...

class NoteEngineStatusRequest(_message.Message):
    __slots__ = ("session_ids",)
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class NoteEngineStatusResponse(_message.Message):
    __slots__ = ("changed",)
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    changed: int
    def __init__(self, changed: _Optional[int] = ...) -> None: ...

class ReplicaRequest(_message.Message):
    __slots__ = ("replica_id", "sessions")
    class SessionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    replica_id: str
    sessions: _containers.ScalarMap[str, str]
    def __init__(self, replica_id: _Optional[str] = ..., sessions: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ReplicaResponse(_message.Message):
    __slots__ = ("sessions", "suspended", "resumed")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SUSPENDED_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    suspended: int
    resumed: int
    def __init__(self, sessions: _Optional[int] = ..., suspended: _Optional[int] = ..., resumed: _Optional[int] = ...) -> None: ...

class TakeOverReplicasRequest(_message.Message):
    __slots__ = ("now_ms",)
    NOW_MS_FIELD_NUMBER: _ClassVar[int]
    now_ms: int
    def __init__(self, now_ms: _Optional[int] = ...) -> None: ...

class EnsureHomeRequest(_message.Message):
    __slots__ = ("tenant_id", "username")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ...) -> None: ...

class HomeInfo(_message.Message):
    __slots__ = ("project_id", "group", "created")
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    project_id: str
    group: str
    created: bool
    def __init__(self, project_id: _Optional[str] = ..., group: _Optional[str] = ..., created: _Optional[bool] = ...) -> None: ...
