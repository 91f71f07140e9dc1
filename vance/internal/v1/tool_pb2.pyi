from google.protobuf import struct_pb2 as _struct_pb2
from vance.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterClientToolsRequest(_message.Message):
    __slots__ = ("session_id", "connection_id", "address", "tools")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    connection_id: str
    address: str
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    def __init__(self, session_id: _Optional[str] = ..., connection_id: _Optional[str] = ..., address: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ...) -> None: ...

class UnregisterClientToolsRequest(_message.Message):
    __slots__ = ("session_id", "connection_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    connection_id: str
    def __init__(self, session_id: _Optional[str] = ..., connection_id: _Optional[str] = ...) -> None: ...

class UnregisterClientToolsResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    def __init__(self, removed: _Optional[bool] = ...) -> None: ...

class WatchRegistryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RegistryChange(_message.Message):
    __slots__ = ("generation",)
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    generation: int
    def __init__(self, generation: _Optional[int] = ...) -> None: ...

class ToolSpec(_message.Message):
    __slots__ = ("name", "description", "parameters", "labels", "allowed_profiles", "owner", "timeout_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_PROFILES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    parameters: _struct_pb2.Struct
    labels: _containers.RepeatedScalarFieldContainer[str]
    allowed_profiles: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    timeout_ms: int
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., labels: _Optional[_Iterable[str]] = ..., allowed_profiles: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class RegisterToolsRequest(_message.Message):
    __slots__ = ("owner", "address", "tools")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    owner: str
    address: str
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    def __init__(self, owner: _Optional[str] = ..., address: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ...) -> None: ...

class RegisterToolsResponse(_message.Message):
    __slots__ = ("registered",)
    REGISTERED_FIELD_NUMBER: _ClassVar[int]
    registered: int
    def __init__(self, registered: _Optional[int] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: str
    def __init__(self, profile: _Optional[str] = ...) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ("tools",)
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolSpec]
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolSpec, _Mapping]]] = ...) -> None: ...

class InvokeToolRequest(_message.Message):
    __slots__ = ("tool_name", "arguments", "process_id", "session_id", "tool_call_id", "idempotency_key", "profile", "tenant_id", "project_id")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    arguments: _struct_pb2.Struct
    process_id: str
    session_id: str
    tool_call_id: str
    idempotency_key: str
    profile: str
    tenant_id: str
    project_id: str
    def __init__(self, tool_name: _Optional[str] = ..., arguments: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., process_id: _Optional[str] = ..., session_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., profile: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ...) -> None: ...

class ResolvePoolRequest(_message.Message):
    __slots__ = ("engine_tools", "add", "remove", "profile", "session_id", "tenant_id", "project_id")
    ENGINE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    ADD_FIELD_NUMBER: _ClassVar[int]
    REMOVE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    engine_tools: _containers.RepeatedScalarFieldContainer[str]
    add: _containers.RepeatedScalarFieldContainer[str]
    remove: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    session_id: str
    tenant_id: str
    project_id: str
    def __init__(self, engine_tools: _Optional[_Iterable[str]] = ..., add: _Optional[_Iterable[str]] = ..., remove: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., session_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ...) -> None: ...

class InvokeToolResponse(_message.Message):
    __slots__ = ("status", "result", "error")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.ToolCallStatus
    result: _struct_pb2.Value
    error: str
    def __init__(self, status: _Optional[_Union[_common_pb2.ToolCallStatus, str]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...
