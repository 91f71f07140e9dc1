from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DocumentOwner(_message.Message):
    __slots__ = ("tenant_id", "user_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    user_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., user_id: _Optional[str] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("owner", "prefix")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    owner: DocumentOwner
    prefix: str
    def __init__(self, owner: _Optional[_Union[DocumentOwner, _Mapping]] = ..., prefix: _Optional[str] = ...) -> None: ...

class DocumentSummary(_message.Message):
    __slots__ = ("path", "title", "size", "updated_at_ms", "source")
    PATH_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    path: str
    title: str
    size: int
    updated_at_ms: int
    source: str
    def __init__(self, path: _Optional[str] = ..., title: _Optional[str] = ..., size: _Optional[int] = ..., updated_at_ms: _Optional[int] = ..., source: _Optional[str] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents",)
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentSummary]
    def __init__(self, documents: _Optional[_Iterable[_Union[DocumentSummary, _Mapping]]] = ...) -> None: ...

class ReadDocumentRequest(_message.Message):
    __slots__ = ("owner", "path")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    owner: DocumentOwner
    path: str
    def __init__(self, owner: _Optional[_Union[DocumentOwner, _Mapping]] = ..., path: _Optional[str] = ...) -> None: ...

class UserDocument(_message.Message):
    __slots__ = ("path", "title", "body", "updated_at_ms", "source")
    PATH_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    path: str
    title: str
    body: str
    updated_at_ms: int
    source: str
    def __init__(self, path: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., updated_at_ms: _Optional[int] = ..., source: _Optional[str] = ...) -> None: ...
