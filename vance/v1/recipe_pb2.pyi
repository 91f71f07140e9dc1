from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Recipe(_message.Message):
    __slots__ = ("name", "description", "engine", "source", "document", "tags")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    engine: str
    source: str
    document: _struct_pb2.Struct
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., engine: _Optional[str] = ..., source: _Optional[str] = ..., document: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tags: _Optional[_Iterable[str]] = ...) -> None: ...

class ListRecipesRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ...) -> None: ...

class ListRecipesResponse(_message.Message):
    __slots__ = ("recipes",)
    RECIPES_FIELD_NUMBER: _ClassVar[int]
    recipes: _containers.RepeatedCompositeFieldContainer[Recipe]
    def __init__(self, recipes: _Optional[_Iterable[_Union[Recipe, _Mapping]]] = ...) -> None: ...

class GetRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class ApplyRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "recipe", "engine", "profile", "caller_params")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    CALLER_PARAMS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    recipe: str
    engine: str
    profile: str
    caller_params: _struct_pb2.Struct
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., recipe: _Optional[str] = ..., engine: _Optional[str] = ..., profile: _Optional[str] = ..., caller_params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class AppliedRecipe(_message.Message):
    __slots__ = ("recipe_name", "engine", "source", "params", "prompt", "allowed_tools_add", "allowed_tools_remove", "snapshot")
    RECIPE_NAME_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_ADD_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_REMOVE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    recipe_name: str
    engine: str
    source: str
    params: _struct_pb2.Struct
    prompt: str
    allowed_tools_add: _containers.RepeatedScalarFieldContainer[str]
    allowed_tools_remove: _containers.RepeatedScalarFieldContainer[str]
    snapshot: _struct_pb2.Struct
    def __init__(self, recipe_name: _Optional[str] = ..., engine: _Optional[str] = ..., source: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., prompt: _Optional[str] = ..., allowed_tools_add: _Optional[_Iterable[str]] = ..., allowed_tools_remove: _Optional[_Iterable[str]] = ..., snapshot: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
