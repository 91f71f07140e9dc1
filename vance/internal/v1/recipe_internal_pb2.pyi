from google.protobuf import struct_pb2 as _struct_pb2
from vance.v1 import recipe_pb2 as _recipe_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PromptMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROMPT_MODE_UNSPECIFIED: _ClassVar[PromptMode]
    PROMPT_MODE_APPEND: _ClassVar[PromptMode]
    PROMPT_MODE_OVERWRITE: _ClassVar[PromptMode]

class ModelSize(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODEL_SIZE_UNSPECIFIED: _ClassVar[ModelSize]
    MODEL_SIZE_SMALL: _ClassVar[ModelSize]
    MODEL_SIZE_LARGE: _ClassVar[ModelSize]

class SelectionDecision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SELECTION_DECISION_UNSPECIFIED: _ClassVar[SelectionDecision]
    SELECTION_DECISION_MATCH: _ClassVar[SelectionDecision]
    SELECTION_DECISION_NONE: _ClassVar[SelectionDecision]
PROMPT_MODE_UNSPECIFIED: PromptMode
PROMPT_MODE_APPEND: PromptMode
PROMPT_MODE_OVERWRITE: PromptMode
MODEL_SIZE_UNSPECIFIED: ModelSize
MODEL_SIZE_SMALL: ModelSize
MODEL_SIZE_LARGE: ModelSize
SELECTION_DECISION_UNSPECIFIED: SelectionDecision
SELECTION_DECISION_MATCH: SelectionDecision
SELECTION_DECISION_NONE: SelectionDecision

class ApplyRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "recipe", "engine", "profile", "caller_params", "model_size")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    CALLER_PARAMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_SIZE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    recipe: str
    engine: str
    profile: str
    caller_params: _struct_pb2.Struct
    model_size: ModelSize
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., recipe: _Optional[str] = ..., engine: _Optional[str] = ..., profile: _Optional[str] = ..., caller_params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model_size: _Optional[_Union[ModelSize, str]] = ...) -> None: ...

class AppliedRecipe(_message.Message):
    __slots__ = ("recipe_name", "engine", "source", "params", "prompt", "allowed_tools_add", "allowed_tools_remove", "snapshot", "source_kind", "prompt_mode", "profile_block", "model_size", "ignored_caller_params", "title")
    RECIPE_NAME_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_ADD_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_REMOVE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    PROMPT_MODE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_BLOCK_FIELD_NUMBER: _ClassVar[int]
    MODEL_SIZE_FIELD_NUMBER: _ClassVar[int]
    IGNORED_CALLER_PARAMS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    recipe_name: str
    engine: str
    source: str
    params: _struct_pb2.Struct
    prompt: str
    allowed_tools_add: _containers.RepeatedScalarFieldContainer[str]
    allowed_tools_remove: _containers.RepeatedScalarFieldContainer[str]
    snapshot: _struct_pb2.Struct
    source_kind: _recipe_pb2.RecipeSource
    prompt_mode: PromptMode
    profile_block: str
    model_size: ModelSize
    ignored_caller_params: _containers.RepeatedScalarFieldContainer[str]
    title: str
    def __init__(self, recipe_name: _Optional[str] = ..., engine: _Optional[str] = ..., source: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., prompt: _Optional[str] = ..., allowed_tools_add: _Optional[_Iterable[str]] = ..., allowed_tools_remove: _Optional[_Iterable[str]] = ..., snapshot: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source_kind: _Optional[_Union[_recipe_pb2.RecipeSource, str]] = ..., prompt_mode: _Optional[_Union[PromptMode, str]] = ..., profile_block: _Optional[str] = ..., model_size: _Optional[_Union[ModelSize, str]] = ..., ignored_caller_params: _Optional[_Iterable[str]] = ..., title: _Optional[str] = ...) -> None: ...

class ResolveLifecycleRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "recipe", "engine", "profile", "settings", "caller")
    class SettingsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    recipe: str
    engine: str
    profile: str
    settings: _containers.ScalarMap[str, str]
    caller: _recipe_pb2.LifecycleProperties
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., recipe: _Optional[str] = ..., engine: _Optional[str] = ..., profile: _Optional[str] = ..., settings: _Optional[_Mapping[str, str]] = ..., caller: _Optional[_Union[_recipe_pb2.LifecycleProperties, _Mapping]] = ...) -> None: ...

class ResolvedLifecycle(_message.Message):
    __slots__ = ("lifecycle", "sources", "recipe_name", "recipe_source")
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    RECIPE_NAME_FIELD_NUMBER: _ClassVar[int]
    RECIPE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    lifecycle: _recipe_pb2.LifecycleProperties
    sources: _recipe_pb2.LifecycleSources
    recipe_name: str
    recipe_source: _recipe_pb2.RecipeSource
    def __init__(self, lifecycle: _Optional[_Union[_recipe_pb2.LifecycleProperties, _Mapping]] = ..., sources: _Optional[_Union[_recipe_pb2.LifecycleSources, _Mapping]] = ..., recipe_name: _Optional[str] = ..., recipe_source: _Optional[_Union[_recipe_pb2.RecipeSource, str]] = ...) -> None: ...

class SelectRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "task", "model", "available_engines")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_ENGINES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    task: str
    model: str
    available_engines: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., task: _Optional[str] = ..., model: _Optional[str] = ..., available_engines: _Optional[_Iterable[str]] = ...) -> None: ...

class RecipeSelection(_message.Message):
    __slots__ = ("decision", "recipe", "engine", "rationale", "model_called", "model")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLED_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    decision: SelectionDecision
    recipe: str
    engine: str
    rationale: str
    model_called: bool
    model: str
    def __init__(self, decision: _Optional[_Union[SelectionDecision, str]] = ..., recipe: _Optional[str] = ..., engine: _Optional[str] = ..., rationale: _Optional[str] = ..., model_called: _Optional[bool] = ..., model: _Optional[str] = ...) -> None: ...

class ListInventoryRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "available_engines")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_ENGINES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    available_engines: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., available_engines: _Optional[_Iterable[str]] = ...) -> None: ...

class InventoryEntry(_message.Message):
    __slots__ = ("name", "engine", "description", "source", "engine_available")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    engine: str
    description: str
    source: _recipe_pb2.RecipeSource
    engine_available: bool
    def __init__(self, name: _Optional[str] = ..., engine: _Optional[str] = ..., description: _Optional[str] = ..., source: _Optional[_Union[_recipe_pb2.RecipeSource, str]] = ..., engine_available: _Optional[bool] = ...) -> None: ...

class Inventory(_message.Message):
    __slots__ = ("recipes", "total")
    RECIPES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    recipes: _containers.RepeatedCompositeFieldContainer[InventoryEntry]
    total: int
    def __init__(self, recipes: _Optional[_Iterable[_Union[InventoryEntry, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...
