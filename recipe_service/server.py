"""recipe_service server: wiring and lifecycle."""

from __future__ import annotations

from recipe_service.recipes import RecipeBook, load_bundled
from recipe_service.service import RecipeServicer
from vance.config import Config, load_config
from vance.logsetup import setup_logging
from vance.server import GrpcHost, run_main, serve_until_signal
from vance.v1 import recipe_pb2, recipe_pb2_grpc

SERVICE_NAME = recipe_pb2.DESCRIPTOR.services_by_name["RecipeService"].full_name


async def create_server(config: Config, *, port: int | None = None) -> tuple[GrpcHost, int]:
    host = GrpcHost([SERVICE_NAME])
    recipe_pb2_grpc.add_RecipeServiceServicer_to_server(
        RecipeServicer(RecipeBook(load_bundled())), host.server
    )
    bound = host.bind(config.grpc_host, config.port("recipe_service") if port is None else port)
    return host, bound


async def serve() -> None:
    config = load_config()
    setup_logging(config.logging, "recipe_service")
    host, _ = await create_server(config)
    await serve_until_signal(host, "recipe_service")


def main() -> None:
    run_main(serve)
