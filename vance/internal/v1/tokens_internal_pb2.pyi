from vance.v1 import tokens_pb2 as _tokens_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListTokenRevocationsSinceRequest(_message.Message):
    __slots__ = ("since_ms",)
    SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    since_ms: int
    def __init__(self, since_ms: _Optional[int] = ...) -> None: ...

class UserTokenRevocations(_message.Message):
    __slots__ = ("tenant_id", "username", "revocations")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    REVOCATIONS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    revocations: _tokens_pb2.TokenRevocations
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., revocations: _Optional[_Union[_tokens_pb2.TokenRevocations, _Mapping]] = ...) -> None: ...

class ListTokenRevocationsSinceResponse(_message.Message):
    __slots__ = ("users", "as_of_ms")
    USERS_FIELD_NUMBER: _ClassVar[int]
    AS_OF_MS_FIELD_NUMBER: _ClassVar[int]
    users: _containers.RepeatedCompositeFieldContainer[UserTokenRevocations]
    as_of_ms: int
    def __init__(self, users: _Optional[_Iterable[_Union[UserTokenRevocations, _Mapping]]] = ..., as_of_ms: _Optional[int] = ...) -> None: ...
