"""recipe_service domain: bundled recipes, defaulting, prompts, sandbox, lifecycle, catalog."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from recipe_service import convert
from recipe_service.bundled import load_bundled_manuals, load_bundled_recipes
from recipe_service.catalog import EngineCatalog, parse_catalog
from recipe_service.defaulting import apply_defaulting
from recipe_service.lifecycle import resolve_lifecycle
from recipe_service.manuals import manual_names
from recipe_service.models import (
    Lifecycle,
    LifecycleSource,
    ModelSize,
    PromptMode,
    Recipe,
    RecipeSource,
)
from recipe_service.prompts import model_size_for
from recipe_service.validation import validate_document
from vance.domain import OnDisconnect, OnIdle, OnSuspend
from vance.errors import InvalidArgumentError

CATALOG = EngineCatalog.bundled()
BUNDLED = load_bundled_recipes(CATALOG.names())
HOUR = 3_600_000


def recipe(name: str, text: str, source: RecipeSource = RecipeSource.TENANT) -> Recipe:
    spec = validate_document(name, yaml.safe_load(text), CATALOG.names())
    return Recipe(name=name, spec=spec, source=source, text=text)


def apply(r: Recipe, profile: str = "web", caller: dict[str, Any] | None = None, **kw: Any) -> Any:
    return apply_defaulting(
        r,
        base=kw.pop("base", None),
        tenant="acme",
        project="moon",
        profile=profile,
        caller_params=caller or {},
        **kw,
    )


def test_bundled_recipes_cover_the_reference_set_and_describe_themselves() -> None:
    wanted = {"arthur", "discuss", "default", "ford", "analyze", "quick-lookup", "web-research"}
    wanted |= {"eddie", "slartibartfast", "recipe-selector", "session-metadata"}
    assert wanted <= set(BUNDLED)
    for r in BUNDLED.values():
        assert len(r.spec.description) > 60, r.name  # the selector matches on it
    assert BUNDLED["recipe-selector"].spec.internal and BUNDLED["session-metadata"].spec.internal
    assert {r.engine for r in BUNDLED.values()} <= CATALOG.names()


def test_params_merge_recipe_then_profile_block_then_caller() -> None:
    r = recipe(
        "merge",
        """
description: d
engine: ford
params: {model: "default:analyze", maxIterations: 5, temperature: 0.2}
profiles:
  foot: {params: {maxIterations: 9, verbose: true}}
""",
    )
    applied = apply(r, "foot", {"temperature": 0.9, "extra": "x"})
    assert applied.params == {
        "model": "default:analyze",
        "maxIterations": 9,  # block beats recipe
        "temperature": 0.9,  # caller beats recipe
        "verbose": True,
        "extra": "x",
    }
    assert applied.ignored_caller_params == []


def test_a_locked_recipe_ignores_caller_params_and_says_which() -> None:
    r = recipe(
        "locked-one", "description: d\nengine: ford\nparams: {maxIterations: 3}\nlocked: true"
    )
    applied = apply(r, caller={"maxIterations": 50, "model": "x"})
    assert applied.params == {"maxIterations": 3}
    assert applied.ignored_caller_params == ["maxIterations", "model"]


def test_profile_block_falls_back_to_default_block() -> None:
    r = recipe(
        "blocks",
        """
description: d
engine: ford
params: {level: recipe}
profiles:
  foot: {params: {level: foot}}
  default: {params: {level: default}}
""",
    )
    assert apply(r, "foot").params["level"] == "foot"
    assert apply(r, "foot").profile_block == "foot"
    assert apply(r, "mobile").params["level"] == "default"
    assert apply(r, "mobile").profile_block == "default"
    plain = recipe("plain", "description: d\nengine: ford\nparams: {level: recipe}")
    assert apply(plain, "mobile").params["level"] == "recipe"
    assert apply(plain, "mobile").profile_block == ""


def test_prompt_renders_params_profile_scope_and_model_size() -> None:
    r = recipe(
        "tmpl",
        """
description: d
engine: ford
params: {model: "default:fast", maxIterations: 4}
promptMode: OVERWRITE
promptPrefix: |
  Steps: {{ params.maxIterations }}. Profile {{ profile }} in {{ tenant }}/{{ project }}.
  {% if model_size == "SMALL" %}Be brief.{% else %}Explain.{% endif %} {{ missing.name }}end
profiles:
  foot: {promptPrefixAppend: "Terminal: {{ recipe }} on {{ engine }}."}
""",
    )
    small = apply(r, "foot")
    assert small.model_size is ModelSize.SMALL  # derived from the `default:fast` tier
    assert small.prompt == (
        "Steps: 4. Profile foot in acme/moon.\nBe brief. end\n\nTerminal: tmpl on ford."
    )
    large = apply(r, "web", {"maxIterations": 7}, model_size=ModelSize.LARGE)
    assert large.prompt == "Steps: 7. Profile web in acme/moon.\nExplain. end"


def test_append_puts_the_engine_recipe_prompt_first_and_overwrite_replaces_it() -> None:
    ford = BUNDLED["ford"]
    append = recipe("extra", "description: d\nengine: ford\npromptPrefix: Be terse.")
    assert append.spec.prompt_mode is PromptMode.APPEND  # the default
    prompt = apply(append, base=ford).prompt
    assert prompt.startswith("You are Ford") and prompt.endswith("\n\nBe terse.")
    overwrite = recipe(
        "solo", "description: d\nengine: ford\npromptMode: OVERWRITE\npromptPrefix: Be terse."
    )
    assert apply(overwrite, base=ford).prompt == "Be terse."
    # The bundled default recipe has no prompt of its own: it gets Ford's.
    assert apply(BUNDLED["default"], base=ford).prompt.startswith("You are Ford")


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ ''.__class__ }}",  # plain Jinja's sandbox would print this as empty text
        "{{ missing.__class__ }}",
        "{{ params.__class__.__init__.__globals__ }}",
        "{% for i in range(10**9) %}x{% endfor %}",
    ],
)
def test_unsafe_templates_are_rejected_when_the_recipe_is_saved(template: str) -> None:
    doc = {"description": "d", "engine": "ford", "promptPrefix": template}
    with pytest.raises(InvalidArgumentError) as info:
        validate_document("evil", doc, CATALOG.names())
    assert info.value.reason == "invalid_recipe"
    assert "promptPrefix" in info.value.message


def test_sandbox_refusal_at_apply_is_a_clear_error() -> None:
    # A recipe that slipped past validation (e.g. stored by an older build) still cannot escape.
    spec = BUNDLED["ford"].spec.model_copy(update={"prompt_prefix": "{{ ''.__class__.__mro__ }}"})
    with pytest.raises(InvalidArgumentError) as info:
        apply(Recipe(name="old", spec=spec))
    assert info.value.reason == "template_unsafe"
    assert "__class__" in info.value.message and "unsafe" in info.value.message


def test_caller_params_are_data_not_templates() -> None:
    r = recipe(
        "echo",
        "description: d\nengine: ford\npromptMode: OVERWRITE\npromptPrefix: 'Goal: {{ params.goal }}'",
    )
    applied = apply(r, caller={"goal": "{{ ''.__class__.__mro__ }}"})
    assert applied.prompt == "Goal: {{ ''.__class__.__mro__ }}"


def test_tool_changes_combine_recipe_and_profile_block() -> None:
    r = recipe(
        "tools",
        """
description: d
engine: ford
allowedToolsAdd: [web_search, "@write", shell]
allowedToolsRemove: [process_create, "doc_*"]
profiles:
  foot: {allowedToolsAdd: [client_file_read, doc_read], allowedToolsRemove: [shell]}
""",
    )
    foot = apply(r, "foot")
    assert foot.tools_add == ["web_search", "@write", "client_file_read", "doc_read"]
    assert foot.tools_remove == ["process_create", "doc_*", "shell"]
    snap = foot.snapshot()
    assert snap["allowedToolsAdd"] == foot.tools_add
    assert snap["allowedToolsRemove"] == foot.tools_remove
    web = apply(r, "web")  # no block for web and no default block: the recipe alone
    assert web.tools_add == ["web_search", "@write", "shell"]
    assert web.tools_remove == ["process_create", "doc_*"]


def test_a_snapshot_shares_nothing_with_the_recipe_or_other_snapshots() -> None:
    arthur = BUNDLED["arthur"]
    first = apply(arthur).snapshot()
    first["params"]["manualPaths"].append("hacked")
    first["params"]["model"] = "changed"
    second = apply(arthur).snapshot()
    assert second["params"]["manualPaths"] == ["process-spawning"]
    assert second["params"]["model"] == "default:chat"
    assert arthur.spec.params["manualPaths"] == ["process-spawning"]


def test_snapshot_records_what_the_process_needs() -> None:
    snap = apply(BUNDLED["quick-lookup"], "foot", base=BUNDLED["ford"]).snapshot()
    assert snap["recipe"] == "quick-lookup" and snap["engine"] == "ford"
    assert snap["source"] == "BUNDLED" and snap["profile"] == "foot"
    assert snap["promptMode"] == "APPEND" and snap["modelSize"] == "SMALL"
    assert snap["prompt"].startswith("You are Ford")


# --- lifecycle (seed 002 §6) -------------------------------------------------------------

BOOT = recipe(
    "boot",
    """
description: d
engine: arthur
profiles:
  foot: {session: {onDisconnect: SUSPEND}}
  default: {session: {onIdle: NONE}}
""",
)
GLOBAL = recipe(
    "default",
    """
description: d
engine: ford
profiles:
  foot: {session: {onSuspend: CLOSE}}
  default: {session: {idleTimeoutMs: 600000}}
""",
)


def resolve(
    bootstrap: Recipe = BOOT,
    default: Recipe | None = GLOBAL,
    profile: str = "foot",
    settings: dict[str, str] | None = None,
    caller: Lifecycle | None = None,
) -> Any:
    return resolve_lifecycle(
        bootstrap=bootstrap,
        default_recipe=default.spec if default else None,
        profile=profile,
        settings=settings or {},
        caller=caller or Lifecycle(),
    )


def test_lifecycle_takes_each_property_from_the_first_step_that_sets_it() -> None:
    r = resolve()
    assert r.lifecycle == Lifecycle(
        on_disconnect=OnDisconnect.SUSPEND,
        on_idle=OnIdle.NONE,
        on_suspend=OnSuspend.CLOSE,
        idle_timeout_ms=600_000,
        suspend_keep_duration_ms=24 * HOUR,
    )
    assert r.sources == {
        "on_disconnect": LifecycleSource.RECIPE_PROFILE,
        "on_idle": LifecycleSource.RECIPE_DEFAULT,
        "on_suspend": LifecycleSource.DEFAULT_RECIPE_PROFILE,
        "idle_timeout_ms": LifecycleSource.DEFAULT_RECIPE_DEFAULT,
        "suspend_keep_duration_ms": LifecycleSource.BUILT_IN,
    }


def test_built_in_defaults_when_no_recipe_says_anything_and_foot_idles_after_an_hour() -> None:
    bare = recipe("bare", "description: d\nengine: arthur")
    web = resolve(bare, None, "web")
    assert web.lifecycle == Lifecycle(
        OnDisconnect.KEEP_OPEN, OnIdle.SUSPEND, OnSuspend.KEEP, 30 * 60_000, 24 * HOUR
    )
    assert set(web.sources.values()) == {LifecycleSource.BUILT_IN}
    assert resolve(bare, None, "foot").lifecycle.idle_timeout_ms == HOUR


def test_bundled_recipes_give_the_documented_profile_table() -> None:
    arthur, default = BUNDLED["arthur"], BUNDLED["default"]
    foot = resolve(arthur, default, "foot").lifecycle
    assert (foot.idle_timeout_ms, foot.suspend_keep_duration_ms) == (HOUR, 24 * HOUR)
    daemon = resolve(arthur, default, "daemon")
    assert daemon.lifecycle.on_disconnect is OnDisconnect.CLOSE
    assert daemon.sources["on_disconnect"] is LifecycleSource.RECIPE_PROFILE
    assert daemon.sources["on_idle"] is LifecycleSource.RECIPE_DEFAULT  # arthur's catch-all
    # A bootstrap recipe without session blocks falls through to the `default` recipe's table.
    lookup = resolve(BUNDLED["quick-lookup"], default, "daemon")
    assert lookup.lifecycle.on_idle is OnIdle.NONE
    assert lookup.sources["on_idle"] is LifecycleSource.DEFAULT_RECIPE_PROFILE


def test_settings_beat_the_recipe_and_the_caller_beats_settings() -> None:
    settings = {
        "vance.session.idleTimeoutMs": "7200000",
        "vance.session.onDisconnect": "close",
        "vance.session.abandoned-detection.min-qa-pairs": "1",  # not ours: ignored
        "ui.theme": "dark",
    }
    r = resolve(settings=settings, caller=Lifecycle(on_disconnect=OnDisconnect.KEEP_OPEN))
    assert r.lifecycle.idle_timeout_ms == 2 * HOUR
    assert r.sources["idle_timeout_ms"] is LifecycleSource.SETTINGS
    assert r.lifecycle.on_disconnect is OnDisconnect.KEEP_OPEN
    assert r.sources["on_disconnect"] is LifecycleSource.CALLER
    # idle 0 is a real value (event-driven sessions close as soon as they rest).
    zero = resolve(caller=Lifecycle(idle_timeout_ms=0))
    assert zero.lifecycle.idle_timeout_ms == 0 and zero.sources["idle_timeout_ms"].value == "CALLER"


@pytest.mark.parametrize(
    "settings",
    [{"vance.session.onIdle": "SOMETIMES"}, {"vance.session.idleTimeoutMs": "-5"}],
)
def test_a_bad_setting_is_rejected_naming_the_key(settings: dict[str, str]) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        resolve(settings=settings)
    assert next(iter(settings)) in info.value.message


# --- validation, catalog, manuals, conversions --------------------------------------------


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"engine": "ford"}, "description"),
        ({"description": "d"}, "engine"),
        ({"description": "d", "engine": "marvin"}, "not in the catalog"),
        ({"description": "d", "engine": "ford", "promptPrefx": "x"}, "promptPrefx: unknown field"),
        ({"description": "d", "engine": "ford", "promptMode": "MERGE"}, "promptMode"),
        (
            {
                "description": "d",
                "engine": "ford",
                "profiles": {"web": {"session": {"onIdle": "X"}}},
            },
            "profiles.web.session.onIdle",
        ),
        ({"description": "d", "engine": "ford", "profiles": {"Web!": {}}}, "profile 'Web!'"),
        ({"description": "d", "engine": "ford", "promptPrefix": "{% if %}"}, "template error"),
    ],
)
def test_invalid_recipes_are_rejected_with_the_reason(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        validate_document("bad", doc, CATALOG.names())
    assert expected in info.value.message


def test_model_size_comes_from_the_caller_then_params_then_the_tier() -> None:
    assert model_size_for({"model": "default:fast"}, None) is ModelSize.SMALL
    assert model_size_for({"model": "default:analyze"}, None) is ModelSize.LARGE
    assert model_size_for({"model": "default:fast", "modelSize": "large"}, None) is ModelSize.LARGE
    assert model_size_for({"model": "default:fast"}, ModelSize.LARGE) is ModelSize.LARGE


def test_engine_catalog_lists_the_four_engines_and_survives_a_broken_reload() -> None:
    catalog = EngineCatalog.bundled()
    assert catalog.names() == {"arthur", "ford", "eddie", "slartibartfast"}
    assert all(e.purpose and e.when_to_use and e.not_for for e in catalog.engines())
    assert "- **slartibartfast**:" in catalog.markdown()
    with pytest.raises(ValueError, match="lacks when_to_use"):
        catalog.reload("engines:\n  zaphod: {purpose: p, not_for: n}\n")
    assert catalog.names() == {"arthur", "ford", "eddie", "slartibartfast"}
    with pytest.raises(ValueError):
        parse_catalog("engines: []")


def test_manual_paths_name_bundled_manuals() -> None:
    manuals = load_bundled_manuals()
    assert {"recipes", "process-spawning"} <= set(manuals)
    assert manuals["recipes"].title == "Writing recipes"
    assert manual_names(["manuals/recipes.md", "recipes", "x.md", " "]) == ["recipes", "x"]
    assert manual_names("recipes") == ["recipes"] and manual_names(None) == []


def test_every_domain_enum_value_has_a_proto_value_and_back() -> None:
    for enum in (RecipeSource, PromptMode, ModelSize, OnDisconnect, OnIdle, OnSuspend):
        for member in enum:
            assert convert.enum_from_proto(enum, convert.enum_to_proto(member)) is member
    for source in LifecycleSource:
        assert convert.enum_from_proto(LifecycleSource, convert.enum_to_proto(source)) is source
    assert convert.enum_from_proto(OnIdle, 0) is None
    with pytest.raises(InvalidArgumentError):
        convert.enum_from_proto(OnIdle, 99)
