from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecipeSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECIPE_SOURCE_UNSPECIFIED: _ClassVar[RecipeSource]
    RECIPE_SOURCE_BUNDLED: _ClassVar[RecipeSource]
    RECIPE_SOURCE_TENANT: _ClassVar[RecipeSource]
    RECIPE_SOURCE_PROJECT: _ClassVar[RecipeSource]

class OnDisconnect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ON_DISCONNECT_UNSPECIFIED: _ClassVar[OnDisconnect]
    ON_DISCONNECT_SUSPEND: _ClassVar[OnDisconnect]
    ON_DISCONNECT_KEEP_OPEN: _ClassVar[OnDisconnect]
    ON_DISCONNECT_CLOSE: _ClassVar[OnDisconnect]

class OnIdle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ON_IDLE_UNSPECIFIED: _ClassVar[OnIdle]
    ON_IDLE_SUSPEND: _ClassVar[OnIdle]
    ON_IDLE_NONE: _ClassVar[OnIdle]

class OnSuspend(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ON_SUSPEND_UNSPECIFIED: _ClassVar[OnSuspend]
    ON_SUSPEND_KEEP: _ClassVar[OnSuspend]
    ON_SUSPEND_CLOSE: _ClassVar[OnSuspend]

class LifecycleSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIFECYCLE_SOURCE_UNSPECIFIED: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_RECIPE_PROFILE: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_RECIPE_DEFAULT: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_DEFAULT_RECIPE_PROFILE: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_DEFAULT_RECIPE_DEFAULT: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_BUILT_IN: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_SETTINGS: _ClassVar[LifecycleSource]
    LIFECYCLE_SOURCE_CALLER: _ClassVar[LifecycleSource]
RECIPE_SOURCE_UNSPECIFIED: RecipeSource
RECIPE_SOURCE_BUNDLED: RecipeSource
RECIPE_SOURCE_TENANT: RecipeSource
RECIPE_SOURCE_PROJECT: RecipeSource
ON_DISCONNECT_UNSPECIFIED: OnDisconnect
ON_DISCONNECT_SUSPEND: OnDisconnect
ON_DISCONNECT_KEEP_OPEN: OnDisconnect
ON_DISCONNECT_CLOSE: OnDisconnect
ON_IDLE_UNSPECIFIED: OnIdle
ON_IDLE_SUSPEND: OnIdle
ON_IDLE_NONE: OnIdle
ON_SUSPEND_UNSPECIFIED: OnSuspend
ON_SUSPEND_KEEP: OnSuspend
ON_SUSPEND_CLOSE: OnSuspend
LIFECYCLE_SOURCE_UNSPECIFIED: LifecycleSource
LIFECYCLE_SOURCE_RECIPE_PROFILE: LifecycleSource
LIFECYCLE_SOURCE_RECIPE_DEFAULT: LifecycleSource
LIFECYCLE_SOURCE_DEFAULT_RECIPE_PROFILE: LifecycleSource
LIFECYCLE_SOURCE_DEFAULT_RECIPE_DEFAULT: LifecycleSource
LIFECYCLE_SOURCE_BUILT_IN: LifecycleSource
LIFECYCLE_SOURCE_SETTINGS: LifecycleSource
LIFECYCLE_SOURCE_CALLER: LifecycleSource

class Recipe(_message.Message):
    __slots__ = ("name", "description", "engine", "source", "document", "tags", "source_kind", "title", "locked", "internal", "listed", "yaml", "tenant_id", "project_id", "updated_at_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    LOCKED_FIELD_NUMBER: _ClassVar[int]
    INTERNAL_FIELD_NUMBER: _ClassVar[int]
    LISTED_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    engine: str
    source: str
    document: _struct_pb2.Struct
    tags: _containers.RepeatedScalarFieldContainer[str]
    source_kind: RecipeSource
    title: str
    locked: bool
    internal: bool
    listed: bool
    yaml: str
    tenant_id: str
    project_id: str
    updated_at_ms: int
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., engine: _Optional[str] = ..., source: _Optional[str] = ..., document: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tags: _Optional[_Iterable[str]] = ..., source_kind: _Optional[_Union[RecipeSource, str]] = ..., title: _Optional[str] = ..., locked: _Optional[bool] = ..., internal: _Optional[bool] = ..., listed: _Optional[bool] = ..., yaml: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., updated_at_ms: _Optional[int] = ...) -> None: ...

class ListRecipesRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "source", "listed_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    LISTED_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    source: RecipeSource
    listed_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., source: _Optional[_Union[RecipeSource, str]] = ..., listed_only: _Optional[bool] = ...) -> None: ...

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

class CreateRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name", "yaml", "document")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    yaml: str
    document: _struct_pb2.Struct
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ..., yaml: _Optional[str] = ..., document: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class UpdateRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name", "yaml", "document")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    yaml: str
    document: _struct_pb2.Struct
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ..., yaml: _Optional[str] = ..., document: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class DeleteRecipeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class DeleteRecipeResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LifecycleProperties(_message.Message):
    __slots__ = ("on_disconnect", "on_idle", "on_suspend", "idle_timeout_ms", "suspend_keep_duration_ms")
    ON_DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    ON_IDLE_FIELD_NUMBER: _ClassVar[int]
    ON_SUSPEND_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SUSPEND_KEEP_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    on_disconnect: OnDisconnect
    on_idle: OnIdle
    on_suspend: OnSuspend
    idle_timeout_ms: int
    suspend_keep_duration_ms: int
    def __init__(self, on_disconnect: _Optional[_Union[OnDisconnect, str]] = ..., on_idle: _Optional[_Union[OnIdle, str]] = ..., on_suspend: _Optional[_Union[OnSuspend, str]] = ..., idle_timeout_ms: _Optional[int] = ..., suspend_keep_duration_ms: _Optional[int] = ...) -> None: ...

class LifecycleSources(_message.Message):
    __slots__ = ("on_disconnect", "on_idle", "on_suspend", "idle_timeout_ms", "suspend_keep_duration_ms")
    ON_DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    ON_IDLE_FIELD_NUMBER: _ClassVar[int]
    ON_SUSPEND_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SUSPEND_KEEP_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    on_disconnect: LifecycleSource
    on_idle: LifecycleSource
    on_suspend: LifecycleSource
    idle_timeout_ms: LifecycleSource
    suspend_keep_duration_ms: LifecycleSource
    def __init__(self, on_disconnect: _Optional[_Union[LifecycleSource, str]] = ..., on_idle: _Optional[_Union[LifecycleSource, str]] = ..., on_suspend: _Optional[_Union[LifecycleSource, str]] = ..., idle_timeout_ms: _Optional[_Union[LifecycleSource, str]] = ..., suspend_keep_duration_ms: _Optional[_Union[LifecycleSource, str]] = ...) -> None: ...

class EngineInfo(_message.Message):
    __slots__ = ("name", "purpose", "when_to_use", "not_for", "unavailable")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    WHEN_TO_USE_FIELD_NUMBER: _ClassVar[int]
    NOT_FOR_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    purpose: str
    when_to_use: str
    not_for: str
    unavailable: bool
    def __init__(self, name: _Optional[str] = ..., purpose: _Optional[str] = ..., when_to_use: _Optional[str] = ..., not_for: _Optional[str] = ..., unavailable: _Optional[bool] = ...) -> None: ...

class ListEnginesRequest(_message.Message):
    __slots__ = ("available_engines",)
    AVAILABLE_ENGINES_FIELD_NUMBER: _ClassVar[int]
    available_engines: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, available_engines: _Optional[_Iterable[str]] = ...) -> None: ...

class ListEnginesResponse(_message.Message):
    __slots__ = ("engines", "markdown")
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    engines: _containers.RepeatedCompositeFieldContainer[EngineInfo]
    markdown: str
    def __init__(self, engines: _Optional[_Iterable[_Union[EngineInfo, _Mapping]]] = ..., markdown: _Optional[str] = ...) -> None: ...

class Manual(_message.Message):
    __slots__ = ("name", "title", "source", "content", "size")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    name: str
    title: str
    source: RecipeSource
    content: str
    size: int
    def __init__(self, name: _Optional[str] = ..., title: _Optional[str] = ..., source: _Optional[_Union[RecipeSource, str]] = ..., content: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class ListManualsRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "recipe", "engine", "profile", "paths", "bundled")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    BUNDLED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    recipe: str
    engine: str
    profile: str
    paths: _containers.RepeatedScalarFieldContainer[str]
    bundled: bool
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., recipe: _Optional[str] = ..., engine: _Optional[str] = ..., profile: _Optional[str] = ..., paths: _Optional[_Iterable[str]] = ..., bundled: _Optional[bool] = ...) -> None: ...

class ListManualsResponse(_message.Message):
    __slots__ = ("manuals", "missing")
    MANUALS_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    manuals: _containers.RepeatedCompositeFieldContainer[Manual]
    missing: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, manuals: _Optional[_Iterable[_Union[Manual, _Mapping]]] = ..., missing: _Optional[_Iterable[str]] = ...) -> None: ...

class ReadManualRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name", "recipe", "engine", "profile")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RECIPE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    recipe: str
    engine: str
    profile: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ..., recipe: _Optional[str] = ..., engine: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class PutManualRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name", "content")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    content: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class DeleteManualRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "name")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    name: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class DeleteManualResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
