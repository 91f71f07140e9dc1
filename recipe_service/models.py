"""recipe_service domain models: the recipe document, applied recipes, lifecycle, catalog, manuals."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from vance.domain import OnDisconnect, OnIdle, OnSuspend

# Recipe names double as file names and store keys, so they stay lowercase and colon-free.
NAME_PATTERN = r"^[a-z][a-z0-9-]{0,63}$"
# Recipes Slartibartfast generates live in the project as `_slart/<runId>/<name>`: the leading
# underscore keeps them out of recipe lists and the selector's inventory, the run id (the
# Slartibartfast process) keeps two runs from overwriting each other.
GENERATED_PREFIX = "_slart/"
GENERATED_NAME_PATTERN = r"^_slart/[a-z0-9][a-z0-9_-]{0,63}/[a-z][a-z0-9-]{0,63}$"
DEFAULT_PROFILE = "default"
DEFAULT_RECIPE = "default"


class RecipeSource(StrEnum):
    BUNDLED = "BUNDLED"
    TENANT = "TENANT"
    PROJECT = "PROJECT"


class PromptMode(StrEnum):
    APPEND = "APPEND"
    OVERWRITE = "OVERWRITE"


class ModelSize(StrEnum):
    SMALL = "SMALL"
    LARGE = "LARGE"


class LifecycleSource(StrEnum):
    RECIPE_PROFILE = "RECIPE_PROFILE"
    RECIPE_DEFAULT = "RECIPE_DEFAULT"
    DEFAULT_RECIPE_PROFILE = "DEFAULT_RECIPE_PROFILE"
    DEFAULT_RECIPE_DEFAULT = "DEFAULT_RECIPE_DEFAULT"
    BUILT_IN = "BUILT_IN"
    SETTINGS = "SETTINGS"
    CALLER = "CALLER"


class _Spec(BaseModel):
    # forbid: a misspelt key (`promptPrefx`) would otherwise be dropped without a word.
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True
    )


class SessionBlock(_Spec):
    """`profiles.<profile>.session`: any subset of the five lifecycle properties."""

    on_disconnect: OnDisconnect | None = None
    on_idle: OnIdle | None = None
    on_suspend: OnSuspend | None = None
    idle_timeout_ms: int | None = Field(default=None, ge=0)
    suspend_keep_duration_ms: int | None = Field(default=None, ge=0)


class ProfileBlock(_Spec):
    params: dict[str, Any] = Field(default_factory=dict)
    prompt_prefix_append: str = ""
    allowed_tools_add: list[str] = Field(default_factory=list)
    allowed_tools_remove: list[str] = Field(default_factory=list)
    session: SessionBlock | None = None


class RecipeSpec(_Spec):
    """One recipe document. The name is not part of it: it is the file name or the store key."""

    description: str = Field(min_length=1)
    engine: str = Field(min_length=1)
    title: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    prompt_prefix: str = ""
    prompt_mode: PromptMode = PromptMode.APPEND
    allowed_tools_add: list[str] = Field(default_factory=list)
    allowed_tools_remove: list[str] = Field(default_factory=list)
    profiles: dict[str, ProfileBlock] = Field(default_factory=dict)
    locked: bool = False
    internal: bool = False
    listed: bool = True
    tags: list[str] = Field(default_factory=list)

    def block(self, profile: str) -> tuple[str, ProfileBlock | None]:
        """The profile block for a profile: the exact one, else `default`, else none."""
        for key in (profile, DEFAULT_PROFILE):
            if key and key in self.profiles:
                return key, self.profiles[key]
        return "", None

    def document(self) -> dict[str, Any]:
        """The document as its author wrote it (only the keys they set), JSON-compatible."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


@dataclass(frozen=True)
class Recipe:
    name: str
    spec: RecipeSpec
    source: RecipeSource = RecipeSource.BUNDLED
    text: str = ""  # the YAML as stored
    tenant_id: str = ""
    project_id: str = ""
    updated_at_ms: int = 0

    @property
    def engine(self) -> str:
        return self.spec.engine


@dataclass(frozen=True)
class AppliedRecipe:
    recipe: Recipe
    profile: str
    profile_block: str
    model_size: ModelSize
    params: dict[str, Any]
    prompt: str
    prompt_mode: PromptMode
    tools_add: list[str] = field(default_factory=list)
    tools_remove: list[str] = field(default_factory=list)
    ignored_caller_params: list[str] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        """What a process keeps. A deep copy, so neither later recipe edits nor changes to
        this dict reach the recipe cache or another process."""
        return copy.deepcopy(
            {
                "recipe": self.recipe.name,
                "source": self.recipe.source.value,
                "engine": self.recipe.engine,
                "title": self.recipe.spec.title,
                "profile": self.profile,
                "profileBlock": self.profile_block,
                "modelSize": self.model_size.value,
                "promptMode": self.prompt_mode.value,
                "prompt": self.prompt,
                "params": self.params,
                "allowedToolsAdd": self.tools_add,
                "allowedToolsRemove": self.tools_remove,
            }
        )


@dataclass(frozen=True)
class Lifecycle:
    """The five lifecycle properties; None means "not set" (only in overrides)."""

    on_disconnect: OnDisconnect | None = None
    on_idle: OnIdle | None = None
    on_suspend: OnSuspend | None = None
    idle_timeout_ms: int | None = None
    suspend_keep_duration_ms: int | None = None


LIFECYCLE_FIELDS = (
    "on_disconnect",
    "on_idle",
    "on_suspend",
    "idle_timeout_ms",
    "suspend_keep_duration_ms",
)


@dataclass(frozen=True)
class ResolvedLifecycle:
    lifecycle: Lifecycle
    sources: dict[str, LifecycleSource]
    recipe_name: str
    recipe_source: RecipeSource


@dataclass(frozen=True)
class EngineInfo:
    name: str
    purpose: str
    when_to_use: str
    not_for: str


@dataclass(frozen=True)
class Manual:
    name: str
    content: str
    source: RecipeSource

    @property
    def title(self) -> str:
        for line in self.content.splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip() or self.name
        return self.name
