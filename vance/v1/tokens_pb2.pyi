from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class RevokeTokensRequest(_message.Message):
    __slots__ = ("tenant_id", "username", "token_id", "expires_at_ms", "all")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_MS_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    token_id: str
    expires_at_ms: int
    all: bool
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ..., token_id: _Optional[str] = ..., expires_at_ms: _Optional[int] = ..., all: _Optional[bool] = ...) -> None: ...

class GetTokenRevocationsRequest(_message.Message):
    __slots__ = ("tenant_id", "username")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    username: str
    def __init__(self, tenant_id: _Optional[str] = ..., username: _Optional[str] = ...) -> None: ...

class TokenRevocations(_message.Message):
    __slots__ = ("revoked_before_ms", "token_ids")
    REVOKED_BEFORE_MS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_IDS_FIELD_NUMBER: _ClassVar[int]
    revoked_before_ms: int
    token_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, revoked_before_ms: _Optional[int] = ..., token_ids: _Optional[_Iterable[str]] = ...) -> None: ...
