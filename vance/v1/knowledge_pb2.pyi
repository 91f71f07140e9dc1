from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KnowledgeRecord(_message.Message):
    __slots__ = ("id", "scope", "kind", "title", "content", "process_id", "created_at_ms", "tags", "score")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    id: str
    scope: str
    kind: str
    title: str
    content: str
    process_id: str
    created_at_ms: int
    tags: _containers.RepeatedScalarFieldContainer[str]
    score: float
    def __init__(self, id: _Optional[str] = ..., scope: _Optional[str] = ..., kind: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., process_id: _Optional[str] = ..., created_at_ms: _Optional[int] = ..., tags: _Optional[_Iterable[str]] = ..., score: _Optional[float] = ...) -> None: ...

class ProjectRef(_message.Message):
    __slots__ = ("tenant_id", "project_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ...) -> None: ...

class ProjectMemoryList(_message.Message):
    __slots__ = ("records",)
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[KnowledgeRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[KnowledgeRecord, _Mapping]]] = ...) -> None: ...

class DeleteProjectMemoryRequest(_message.Message):
    __slots__ = ("project", "id")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    project: ProjectRef
    id: str
    def __init__(self, project: _Optional[_Union[ProjectRef, _Mapping]] = ..., id: _Optional[str] = ...) -> None: ...

class DeleteProjectMemoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class AddRagDocumentRequest(_message.Message):
    __slots__ = ("project", "source", "title", "media_type", "content", "added_by")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ADDED_BY_FIELD_NUMBER: _ClassVar[int]
    project: ProjectRef
    source: str
    title: str
    media_type: str
    content: bytes
    added_by: str
    def __init__(self, project: _Optional[_Union[ProjectRef, _Mapping]] = ..., source: _Optional[str] = ..., title: _Optional[str] = ..., media_type: _Optional[str] = ..., content: _Optional[bytes] = ..., added_by: _Optional[str] = ...) -> None: ...

class RagDocument(_message.Message):
    __slots__ = ("source", "title", "media_type", "chunks", "size", "updated_at_ms", "added_by")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    ADDED_BY_FIELD_NUMBER: _ClassVar[int]
    source: str
    title: str
    media_type: str
    chunks: int
    size: int
    updated_at_ms: int
    added_by: str
    def __init__(self, source: _Optional[str] = ..., title: _Optional[str] = ..., media_type: _Optional[str] = ..., chunks: _Optional[int] = ..., size: _Optional[int] = ..., updated_at_ms: _Optional[int] = ..., added_by: _Optional[str] = ...) -> None: ...

class RagDocumentList(_message.Message):
    __slots__ = ("documents",)
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[RagDocument]
    def __init__(self, documents: _Optional[_Iterable[_Union[RagDocument, _Mapping]]] = ...) -> None: ...

class DeleteRagDocumentRequest(_message.Message):
    __slots__ = ("project", "source")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    project: ProjectRef
    source: str
    def __init__(self, project: _Optional[_Union[ProjectRef, _Mapping]] = ..., source: _Optional[str] = ...) -> None: ...

class DeleteRagDocumentResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...
