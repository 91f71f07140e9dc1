"""recipe_service server: wiring and lifecycle."""

from __future__ import annotations

from recipe_service.bundled import load_bundled_manuals, load_bundled_recipes
from recipe_service.cascade import Recipes
from recipe_service.catalog import EngineCatalog
from recipe_service.manuals import Manuals
from recipe_service.selector import PURPOSE, SELECTOR_RECIPE, RecipeSelector
from recipe_service.service import RecipeServicer
from recipe_service.store import RecipeStore
from vance.clock import Clock, SystemClock
from vance.config import Config, load_config
from vance.heap import settle_heap
from vance.internal.v1 import recipe_internal_pb2, recipe_internal_pb2_grpc
from vance.llm import ModelClient, is_configured, make_model_client, uses_litellm
from vance.logsetup import setup_logging
from vance.observability.setup import start_observability
from vance.server import GrpcHost, run_main, serve_until_signal
from vance.store import connect
from vance.v1 import recipe_pb2, recipe_pb2_grpc

SERVICE_NAME = recipe_pb2.DESCRIPTOR.services_by_name["RecipeService"].full_name
INTERNAL_SERVICE_NAME = recipe_internal_pb2.DESCRIPTOR.services_by_name[
    "RecipeInternalService"
].full_name


async def create_server(
    config: Config, *, port: int | None = None, clock: Clock | None = None
) -> tuple[GrpcHost, int]:
    # Bundled recipes are validated against the catalog here, so a broken one fails the start.
    catalog = EngineCatalog.load(config.recipes.catalog_path)
    client, db = connect(config)
    store = RecipeStore(db)
    clock = clock or SystemClock()
    bundled = load_bundled_recipes(catalog.names())
    recipes = Recipes(store.recipes, catalog, bundled, clock)
    manuals = Manuals(store.manuals, load_bundled_manuals(), recipes, clock)

    def selector_llm() -> ModelClient:
        # Routed as the workers' calls are: OpenAI-compatible models over aiohttp, litellm
        # only for the providers that need it (it costs this service ~170 MB once imported).
        return make_model_client(config.llm, purpose=PURPOSE)

    selector = RecipeSelector(
        recipes,
        catalog,
        bundled[SELECTOR_RECIPE],
        selector_llm,
        timeout_s=config.recipes.selector_timeout_ms / 1000,
    )
    host = GrpcHost([SERVICE_NAME, INTERNAL_SERVICE_NAME], config)
    servicer = RecipeServicer(recipes, manuals, catalog, selector)
    recipe_pb2_grpc.add_RecipeServiceServicer_to_server(servicer, host.server)
    recipe_internal_pb2_grpc.add_RecipeInternalServiceServicer_to_server(servicer, host.server)
    bound = host.bind(config.grpc_host, config.port("recipe_service") if port is None else port)
    # Importing litellm takes seconds of CPU; done in a thread now, the first selection does
    # not block this service's loop with it. Only when a configured model goes through it.
    if is_configured(config.llm) and uses_litellm(config.llm):
        host.background.start(
            "selector-warm-up", selector.warm_up(), forever=False, best_effort=True
        )

    async def close() -> None:
        await client.close()

    host.on_stop(close)
    return host, bound


async def serve() -> None:
    config = load_config()
    setup_logging(config.logging, "recipe_service")
    start_observability(config, "recipe_service")
    host, _ = await create_server(config)
    settle_heap()
    await serve_until_signal(host, "recipe_service")


def main() -> None:
    run_main(serve)
