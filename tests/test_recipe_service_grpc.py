"""RecipeService over real gRPC against the running system: CRUD, cascade, apply, lifecycle,
engines and manuals, with stored recipes in the real store."""

from __future__ import annotations

import itertools
import os
from typing import Any

import grpc
import pytest
import yaml

from tests.harness import System
from vance.errors import reason_of
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import recipe_internal_pb2_grpc
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import recipe_pb2_grpc

_seq = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_seq)}"


def stub(system: System) -> recipe_pb2_grpc.RecipeServiceAsyncStub:
    return recipe_pb2_grpc.RecipeServiceStub(system.channel("recipe_service"))


def internal(system: System) -> recipe_internal_pb2_grpc.RecipeInternalServiceAsyncStub:
    return recipe_internal_pb2_grpc.RecipeInternalServiceStub(system.channel("recipe_service"))


def ford(description: str, **fields: Any) -> str:
    return yaml.safe_dump({"description": description, "engine": "ford", **fields})


async def failure(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return info.value


async def test_tenant_recipe_crud_with_clear_errors(system: System) -> None:
    rs, tenant = stub(system), unique("crud")
    created = await rs.CreateRecipe(
        rpb.CreateRecipeRequest(
            tenant_id=tenant, name="digest", yaml="# team digest\n" + ford("Weekly digest.")
        )
    )
    assert created.source_kind == rpb.RECIPE_SOURCE_TENANT and created.source == "TENANT"
    assert created.yaml.startswith("# team digest")  # the author's text, comments and all
    assert created.updated_at_ms > 0

    again = await failure(
        rs.CreateRecipe(rpb.CreateRecipeRequest(tenant_id=tenant, name="digest", yaml=ford("x")))
    )
    assert again.code() == grpc.StatusCode.ALREADY_EXISTS

    listed = await rs.ListRecipes(
        rpb.ListRecipesRequest(tenant_id=tenant, source=rpb.RECIPE_SOURCE_TENANT)
    )
    assert [r.name for r in listed.recipes] == ["digest"]

    updated = await rs.UpdateRecipe(
        rpb.UpdateRecipeRequest(
            tenant_id=tenant,
            name="digest",
            document=dict_to_struct(
                {"description": "Daily digest.", "engine": "ford", "params": {"maxIterations": 3}}
            ),
        )
    )
    assert updated.description == "Daily digest."
    assert "maxIterations: 3\n" in updated.yaml  # an int again, not Struct's 3.0
    got = await rs.GetRecipe(rpb.GetRecipeRequest(tenant_id=tenant, name="digest"))
    assert struct_to_dict(got.document)["params"] == {"maxIterations": 3}

    await rs.DeleteRecipe(rpb.DeleteRecipeRequest(tenant_id=tenant, name="digest"))
    for call in (
        rs.GetRecipe(rpb.GetRecipeRequest(tenant_id=tenant, name="digest")),
        rs.DeleteRecipe(rpb.DeleteRecipeRequest(tenant_id=tenant, name="digest")),
        rs.UpdateRecipe(rpb.UpdateRecipeRequest(tenant_id=tenant, name="digest", yaml=ford("x"))),
    ):
        assert (await failure(call)).code() == grpc.StatusCode.NOT_FOUND
    listed = await rs.ListRecipes(
        rpb.ListRecipesRequest(tenant_id=tenant, source=rpb.RECIPE_SOURCE_TENANT)
    )
    assert list(listed.recipes) == []


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("Bad_Name", ford("d"), "must match"),
        ("no-engine", "description: d\n", "engine"),
        ("no-description", "engine: ford\n", "description"),
        ("marvin", "description: d\nengine: marvin\n", "not in the catalog"),
        ("broken", "description: [unclosed\n", "not valid YAML"),
        ("evil", ford("d", promptPrefix="{{ ''.__class__.__mro__ }}"), "unsafe"),
    ],
)
async def test_invalid_recipes_are_refused_with_invalid_argument(
    system: System, name: str, content: str, expected: str
) -> None:
    err = await failure(
        stub(system).CreateRecipe(
            rpb.CreateRecipeRequest(tenant_id=unique("bad"), name=name, yaml=content)
        )
    )
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in (err.details() or "")


async def test_create_needs_content_and_a_tenant(system: System) -> None:
    rs = stub(system)
    empty = await failure(rs.CreateRecipe(rpb.CreateRecipeRequest(tenant_id="t", name="x")))
    assert empty.code() == grpc.StatusCode.INVALID_ARGUMENT and reason_of(empty) == "no_content"
    no_tenant = await failure(rs.CreateRecipe(rpb.CreateRecipeRequest(name="x", yaml=ford("d"))))
    assert reason_of(no_tenant) == "tenant_required"


async def test_cascade_project_beats_tenant_beats_bundled_without_merging(system: System) -> None:
    rs, tenant, moon, mars = stub(system), unique("casc"), unique("moon"), unique("mars")

    async def apply(project: str) -> ripb.AppliedRecipe:
        req = ripb.ApplyRecipeRequest(tenant_id=tenant, project_id=project, recipe="ford")
        applied: ripb.AppliedRecipe = await internal(system).ApplyRecipe(req)
        return applied

    assert (await apply(moon)).source_kind == rpb.RECIPE_SOURCE_BUNDLED
    await rs.CreateRecipe(
        rpb.CreateRecipeRequest(
            tenant_id=tenant,
            name="ford",
            yaml=ford("Tenant ford.", params={"maxIterations": 30, "temperature": 0.5}),
        )
    )
    await rs.CreateRecipe(
        rpb.CreateRecipeRequest(
            tenant_id=tenant, project_id=moon, name="ford", yaml=ford("Moon ford.", params={})
        )
    )
    on_moon, on_mars = await apply(moon), await apply(mars)
    assert on_moon.source_kind == rpb.RECIPE_SOURCE_PROJECT
    # First hit wins whole: nothing of the tenant's (or bundled) params leaks into the project's.
    assert struct_to_dict(on_moon.params) == {}
    assert on_mars.source_kind == rpb.RECIPE_SOURCE_TENANT
    assert struct_to_dict(on_mars.params) == {"maxIterations": 30, "temperature": 0.5}

    view = await rs.ListRecipes(rpb.ListRecipesRequest(tenant_id=tenant, project_id=moon))
    by_name = {r.name: r for r in view.recipes}
    assert by_name["ford"].description == "Moon ford."
    assert by_name["analyze"].source_kind == rpb.RECIPE_SOURCE_BUNDLED
    other_tenant = await rs.GetRecipe(rpb.GetRecipeRequest(tenant_id=unique("x"), name="ford"))
    assert other_tenant.source_kind == rpb.RECIPE_SOURCE_BUNDLED

    await rs.DeleteRecipe(rpb.DeleteRecipeRequest(tenant_id=tenant, project_id=moon, name="ford"))
    assert (await apply(moon)).source_kind == rpb.RECIPE_SOURCE_TENANT


async def test_listed_only_hides_internal_and_unlisted_recipes(system: System) -> None:
    rs = stub(system)
    everything = await rs.ListRecipes(rpb.ListRecipesRequest(tenant_id=unique("l")))
    pickable = await rs.ListRecipes(rpb.ListRecipesRequest(tenant_id="l", listed_only=True))
    assert {"recipe-selector", "session-metadata", "arthur"} <= {r.name for r in everything.recipes}
    names = {r.name for r in pickable.recipes}
    assert {"recipe-selector", "session-metadata", "arthur", "eddie"}.isdisjoint(names)
    assert {"ford", "analyze", "quick-lookup", "web-research"} <= names


async def test_a_later_apply_sees_an_edit_and_the_earlier_snapshot_stays(system: System) -> None:
    rs, tenant, project = stub(system), unique("snap"), unique("p")
    doc = ford("Writer.", promptMode="OVERWRITE", promptPrefix="Write {{ params.style }}.")
    await rs.CreateRecipe(
        rpb.CreateRecipeRequest(tenant_id=tenant, project_id=project, name="writer", yaml=doc)
    )
    request = ripb.ApplyRecipeRequest(
        tenant_id=tenant,
        project_id=project,
        recipe="writer",
        profile="web",
        caller_params=dict_to_struct({"style": "plainly"}),
    )
    first = await internal(system).ApplyRecipe(request)
    kept = struct_to_dict(first.snapshot)
    assert kept["prompt"] == "Write plainly."

    edited = ford("Writer.", promptMode="OVERWRITE", promptPrefix="Rewrite {{ params.style }}!")
    await rs.UpdateRecipe(
        rpb.UpdateRecipeRequest(tenant_id=tenant, project_id=project, name="writer", yaml=edited)
    )
    second = await internal(system).ApplyRecipe(request)
    assert struct_to_dict(second.snapshot)["prompt"] == "Rewrite plainly!"
    assert struct_to_dict(first.snapshot) == kept and kept["prompt"] == "Write plainly."


async def test_apply_for_session_chat_keeps_the_fields_session_create_uses(system: System) -> None:
    applied = await internal(system).ApplyRecipe(
        ripb.ApplyRecipeRequest(
            tenant_id=unique("s"), project_id="p", engine="arthur", profile="foot"
        )
    )
    assert (applied.engine, applied.recipe_name) == ("arthur", "arthur")
    assert struct_to_dict(applied.snapshot)["prompt"].startswith("You are Arthur")
    assert struct_to_dict(applied.params)["model"] == "default:chat"
    assert applied.profile_block == "foot" and applied.prompt_mode == ripb.PROMPT_MODE_OVERWRITE
    missing = await failure(internal(system).ApplyRecipe(ripb.ApplyRecipeRequest(recipe="nope")))
    assert missing.code() == grpc.StatusCode.NOT_FOUND and reason_of(missing) == "recipe_not_found"


async def test_resolve_lifecycle_over_grpc_with_tenant_table_settings_and_caller(
    system: System,
) -> None:
    rs, tenant = stub(system), unique("life")
    req = ripb.ResolveLifecycleRequest(tenant_id=tenant, project_id="p", engine="arthur")
    foot = await internal(system).ResolveLifecycle(
        ripb.ResolveLifecycleRequest(**_fields(req), profile="foot")
    )
    assert foot.lifecycle.on_disconnect == rpb.ON_DISCONNECT_KEEP_OPEN
    assert foot.lifecycle.idle_timeout_ms == 3_600_000
    assert foot.sources.idle_timeout_ms == rpb.LIFECYCLE_SOURCE_RECIPE_PROFILE

    # A tenant's own `default` recipe is the global table for bootstrap recipes without blocks.
    table = {"profiles": {"web": {"session": {"onSuspend": "CLOSE", "idleTimeoutMs": 0}}}}
    await rs.CreateRecipe(
        rpb.CreateRecipeRequest(tenant_id=tenant, name="default", yaml=ford("Mine.", **table))
    )
    lookup = ripb.ResolveLifecycleRequest(tenant_id=tenant, recipe="quick-lookup", profile="web")
    resolved = await internal(system).ResolveLifecycle(lookup)
    assert resolved.lifecycle.on_suspend == rpb.ON_SUSPEND_CLOSE
    assert (
        resolved.lifecycle.HasField("idle_timeout_ms") and resolved.lifecycle.idle_timeout_ms == 0
    )
    assert resolved.sources.on_suspend == rpb.LIFECYCLE_SOURCE_DEFAULT_RECIPE_PROFILE
    assert resolved.sources.on_disconnect == rpb.LIFECYCLE_SOURCE_BUILT_IN

    lookup.settings["vance.session.suspendKeepDurationMs"] = "3600000"
    lookup.caller.CopyFrom(rpb.LifecycleProperties(on_suspend=rpb.ON_SUSPEND_KEEP))
    overridden = await internal(system).ResolveLifecycle(lookup)
    assert overridden.lifecycle.suspend_keep_duration_ms == 3_600_000
    assert overridden.sources.suspend_keep_duration_ms == rpb.LIFECYCLE_SOURCE_SETTINGS
    assert overridden.lifecycle.on_suspend == rpb.ON_SUSPEND_KEEP
    assert overridden.sources.on_suspend == rpb.LIFECYCLE_SOURCE_CALLER

    lookup.settings["vance.session.onIdle"] = "LATER"
    bad = await failure(internal(system).ResolveLifecycle(lookup))
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT and "vance.session.onIdle" in (
        bad.details() or ""
    )


def _fields(req: ripb.ResolveLifecycleRequest) -> dict[str, Any]:
    return {"tenant_id": req.tenant_id, "project_id": req.project_id, "engine": req.engine}


async def test_list_engines_serves_the_catalog(system: System) -> None:
    resp = await internal(system).ListEngines(rpb.ListEnginesRequest())
    assert [e.name for e in resp.engines] == ["arthur", "eddie", "ford", "slartibartfast"]
    assert all(e.purpose and e.when_to_use and e.not_for for e in resp.engines)
    assert "- **ford**:" in resp.markdown


async def test_manuals_follow_manual_paths_through_the_cascade(system: System) -> None:
    rs, tenant, project = stub(system), unique("man"), unique("p")
    bundled = await rs.ListManuals(rpb.ListManualsRequest(tenant_id=tenant, engine="arthur"))
    assert [(m.name, m.source) for m in bundled.manuals] == [
        ("process-spawning", rpb.RECIPE_SOURCE_BUNDLED)
    ]
    assert bundled.manuals[0].content == "" and bundled.manuals[0].size > 100

    await rs.PutManual(
        rpb.PutManualRequest(tenant_id=tenant, name="style", content="# House style\nShort.")
    )
    await rs.PutManual(
        rpb.PutManualRequest(
            tenant_id=tenant, project_id=project, name="recipes", content="# Our recipes\n..."
        )
    )
    doc = ford("Editor.", params={"manualPaths": ["manuals/recipes.md", "style", "gone"]})
    await rs.CreateRecipe(
        rpb.CreateRecipeRequest(tenant_id=tenant, project_id=project, name="editor", yaml=doc)
    )
    listing = await rs.ListManuals(
        rpb.ListManualsRequest(tenant_id=tenant, project_id=project, recipe="editor")
    )
    assert [(m.name, m.title, m.source) for m in listing.manuals] == [
        ("recipes", "Our recipes", rpb.RECIPE_SOURCE_PROJECT),
        ("style", "House style", rpb.RECIPE_SOURCE_TENANT),
    ]
    assert list(listing.missing) == ["gone"]

    read = await rs.ReadManual(
        rpb.ReadManualRequest(tenant_id=tenant, project_id=project, name="style", recipe="editor")
    )
    assert read.content == "# House style\nShort."
    elsewhere = await rs.ReadManual(rpb.ReadManualRequest(tenant_id=tenant, name="recipes"))
    assert elsewhere.source == rpb.RECIPE_SOURCE_BUNDLED  # the project's copy stays there
    not_named = await failure(
        rs.ReadManual(rpb.ReadManualRequest(tenant_id=tenant, name="recipes", engine="arthur"))
    )
    assert reason_of(not_named) == "manual_not_in_recipe"

    from_snapshot = await rs.ListManuals(
        rpb.ListManualsRequest(tenant_id=tenant, paths=["style", "process-spawning"])
    )
    assert [m.name for m in from_snapshot.manuals] == ["style", "process-spawning"]

    await rs.DeleteManual(rpb.DeleteManualRequest(tenant_id=tenant, name="style"))
    gone = await failure(rs.ReadManual(rpb.ReadManualRequest(tenant_id=tenant, name="style")))
    assert gone.code() == grpc.StatusCode.NOT_FOUND
