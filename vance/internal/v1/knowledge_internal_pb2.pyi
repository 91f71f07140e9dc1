from vance.v1 import knowledge_pb2 as _knowledge_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecallMemoryRequest(_message.Message):
    __slots__ = ("process_id", "scope", "query", "limit", "max_chars")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    scope: str
    query: str
    limit: int
    max_chars: int
    def __init__(self, process_id: _Optional[str] = ..., scope: _Optional[str] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., max_chars: _Optional[int] = ...) -> None: ...

class RecallMemoryResponse(_message.Message):
    __slots__ = ("records",)
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[_knowledge_pb2.KnowledgeRecord]
    def __init__(self, records: _Optional[_Iterable[_Union[_knowledge_pb2.KnowledgeRecord, _Mapping]]] = ...) -> None: ...

class QueryRagRequest(_message.Message):
    __slots__ = ("process_id", "query", "top_k", "min_score")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    query: str
    top_k: int
    min_score: float
    def __init__(self, process_id: _Optional[str] = ..., query: _Optional[str] = ..., top_k: _Optional[int] = ..., min_score: _Optional[float] = ...) -> None: ...

class RagChunk(_message.Message):
    __slots__ = ("source", "title", "text", "ordinal", "score", "keyword_score", "vector_score")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_SCORE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_SCORE_FIELD_NUMBER: _ClassVar[int]
    source: str
    title: str
    text: str
    ordinal: int
    score: float
    keyword_score: float
    vector_score: float
    def __init__(self, source: _Optional[str] = ..., title: _Optional[str] = ..., text: _Optional[str] = ..., ordinal: _Optional[int] = ..., score: _Optional[float] = ..., keyword_score: _Optional[float] = ..., vector_score: _Optional[float] = ...) -> None: ...

class QueryRagResponse(_message.Message):
    __slots__ = ("chunks", "hybrid")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    HYBRID_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[RagChunk]
    hybrid: bool
    def __init__(self, chunks: _Optional[_Iterable[_Union[RagChunk, _Mapping]]] = ..., hybrid: _Optional[bool] = ...) -> None: ...
