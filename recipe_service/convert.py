"""recipe_service conversions between domain models and protos (the only module using _pb2)."""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum
from typing import Any, TypeVar, cast

from recipe_service.cascade import RecipeInput
from recipe_service.inventory import Inventory
from recipe_service.manuals import ManualListing
from recipe_service.models import (
    AppliedRecipe,
    EngineInfo,
    Lifecycle,
    LifecycleSource,
    Manual,
    ModelSize,
    PromptMode,
    Recipe,
    RecipeSource,
    ResolvedLifecycle,
)
from recipe_service.selector import Decision, Selection
from vance.domain import OnDisconnect, OnIdle, OnSuspend
from vance.errors import InvalidArgumentError
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import recipe_pb2 as rpb

E = TypeVar("E", bound=StrEnum)

# Proto enum values are the domain values with a type prefix (RECIPE_SOURCE_TENANT).
_PREFIX: dict[type[StrEnum], tuple[Any, str]] = {
    RecipeSource: (rpb.RecipeSource, "RECIPE_SOURCE_"),
    PromptMode: (ripb.PromptMode, "PROMPT_MODE_"),
    ModelSize: (ripb.ModelSize, "MODEL_SIZE_"),
    OnDisconnect: (rpb.OnDisconnect, "ON_DISCONNECT_"),
    OnIdle: (rpb.OnIdle, "ON_IDLE_"),
    OnSuspend: (rpb.OnSuspend, "ON_SUSPEND_"),
    LifecycleSource: (rpb.LifecycleSource, "LIFECYCLE_SOURCE_"),
}


def enum_to_proto(value: StrEnum | None) -> int:
    if value is None:
        return 0
    wrapper, prefix = _PREFIX[type(value)]
    return int(wrapper.Value(prefix + value.value))


def enum_from_proto(cls: type[E], number: int) -> E | None:
    """None for UNSPECIFIED; a number this build does not know is bad input."""
    if number == 0:
        return None
    wrapper, prefix = _PREFIX[cls]
    try:
        name = str(wrapper.Name(number))
    except ValueError:
        raise InvalidArgumentError(f"unknown {cls.__name__} value {number}") from None
    return cls(name.removeprefix(prefix))


def recipe_to_proto(r: Recipe) -> rpb.Recipe:
    return rpb.Recipe(
        name=r.name,
        description=r.spec.description,
        engine=r.engine,
        source=r.source.value,
        document=dict_to_struct(r.spec.document()),
        tags=r.spec.tags,
        source_kind=cast(rpb.RecipeSource, enum_to_proto(r.source)),
        title=r.spec.title,
        locked=r.spec.locked,
        internal=r.spec.internal,
        listed=r.spec.listed,
        yaml=r.text,
        tenant_id=r.tenant_id,
        project_id=r.project_id,
        updated_at_ms=r.updated_at_ms,
    )


def recipe_input_from_proto(
    request: rpb.CreateRecipeRequest | rpb.UpdateRecipeRequest,
) -> RecipeInput:
    which = request.WhichOneof("content")
    if which == "yaml":
        return request.yaml
    if which == "document":
        return struct_to_dict(request.document)
    if which is None:
        raise InvalidArgumentError("give the recipe as yaml or as a document", reason="no_content")
    raise InvalidArgumentError(f"unknown recipe content {which!r}")


def applied_to_proto(a: AppliedRecipe) -> ripb.AppliedRecipe:
    return ripb.AppliedRecipe(
        recipe_name=a.recipe.name,
        engine=a.recipe.engine,
        source=a.recipe.source.value,
        params=dict_to_struct(a.params),
        prompt=a.prompt,
        allowed_tools_add=a.tools_add,
        allowed_tools_remove=a.tools_remove,
        snapshot=dict_to_struct(a.snapshot()),
        source_kind=cast(rpb.RecipeSource, enum_to_proto(a.recipe.source)),
        prompt_mode=cast(ripb.PromptMode, enum_to_proto(a.prompt_mode)),
        profile_block=a.profile_block,
        model_size=cast(ripb.ModelSize, enum_to_proto(a.model_size)),
        ignored_caller_params=a.ignored_caller_params,
        title=a.recipe.spec.title,
    )


def lifecycle_from_proto(p: rpb.LifecycleProperties) -> Lifecycle:
    return Lifecycle(
        on_disconnect=enum_from_proto(OnDisconnect, p.on_disconnect),
        on_idle=enum_from_proto(OnIdle, p.on_idle),
        on_suspend=enum_from_proto(OnSuspend, p.on_suspend),
        idle_timeout_ms=_non_negative(p, "idle_timeout_ms"),
        suspend_keep_duration_ms=_non_negative(p, "suspend_keep_duration_ms"),
    )


def _non_negative(p: rpb.LifecycleProperties, name: str) -> int | None:
    if not p.HasField(name):
        return None
    value = int(getattr(p, name))
    if value < 0:
        raise InvalidArgumentError(
            f"caller {name} must not be negative", reason="invalid_lifecycle"
        )
    return value


def lifecycle_to_proto(lc: Lifecycle) -> rpb.LifecycleProperties:
    return rpb.LifecycleProperties(
        on_disconnect=cast(rpb.OnDisconnect, enum_to_proto(lc.on_disconnect)),
        on_idle=cast(rpb.OnIdle, enum_to_proto(lc.on_idle)),
        on_suspend=cast(rpb.OnSuspend, enum_to_proto(lc.on_suspend)),
        idle_timeout_ms=lc.idle_timeout_ms,
        suspend_keep_duration_ms=lc.suspend_keep_duration_ms,
    )


def resolved_to_proto(r: ResolvedLifecycle) -> ripb.ResolvedLifecycle:
    sources = {k: cast(rpb.LifecycleSource, enum_to_proto(v)) for k, v in r.sources.items()}
    return ripb.ResolvedLifecycle(
        lifecycle=lifecycle_to_proto(r.lifecycle),
        sources=rpb.LifecycleSources(**sources),
        recipe_name=r.recipe_name,
        recipe_source=cast(rpb.RecipeSource, enum_to_proto(r.recipe_source)),
    )


def engines_to_proto(
    engines: list[EngineInfo], markdown: str, available: Collection[str] = ()
) -> rpb.ListEnginesResponse:
    return rpb.ListEnginesResponse(
        engines=[
            rpb.EngineInfo(
                name=e.name,
                purpose=e.purpose,
                when_to_use=e.when_to_use,
                not_for=e.not_for,
                unavailable=bool(available) and e.name not in available,
            )
            for e in engines
        ],
        markdown=markdown,
    )


def selection_to_proto(s: Selection) -> ripb.RecipeSelection:
    return ripb.RecipeSelection(
        decision=(
            ripb.SELECTION_DECISION_MATCH
            if s.decision is Decision.MATCH
            else ripb.SELECTION_DECISION_NONE
        ),
        recipe=s.recipe,
        engine=s.engine,
        rationale=s.rationale,
        model_called=s.model_called,
        model=s.model,
    )


def inventory_to_proto(inv: Inventory) -> ripb.Inventory:
    return ripb.Inventory(
        recipes=[
            ripb.InventoryEntry(
                name=e.name,
                engine=e.engine,
                description=e.description,
                source=cast(rpb.RecipeSource, enum_to_proto(e.source)),
                engine_available=e.engine_available,
            )
            for e in inv.entries
        ],
        total=inv.total,
    )


def manual_to_proto(m: Manual, *, with_content: bool = True) -> rpb.Manual:
    return rpb.Manual(
        name=m.name,
        title=m.title,
        source=cast(rpb.RecipeSource, enum_to_proto(m.source)),
        content=m.content if with_content else "",
        size=len(m.content),
    )


def listing_to_proto(listing: ManualListing) -> rpb.ListManualsResponse:
    return rpb.ListManualsResponse(
        manuals=[manual_to_proto(m, with_content=False) for m in listing.manuals],
        missing=listing.missing,
    )
