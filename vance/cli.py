"""The `vance` command: `vance run` starts the whole system on the embedded default and keeps it
running (crashed children are restarted); `vance status` shows each child of a running one."""

from __future__ import annotations

from vance.grpc_env import apply_grpc_env

# `vance run` starts every service from here, and its children inherit this environment
# (vance/supervisor.py passes it on in any case); gRPC reads it when it is imported.
apply_grpc_env()

import argparse
import asyncio
import logging
import signal
import sys

from vance.config import ConfigError, load_config
from vance.llm import NOT_CONFIGURED, is_configured
from vance.logsetup import setup_logging
from vance.supervisor import Supervisor, die_with_parent

logger = logging.getLogger("vance")


async def _run() -> int:
    config = load_config()
    setup_logging(config.logging, "vance")
    sup = Supervisor(config, env={})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    die_with_parent()
    code = 0
    try:
        await sup.start_all()
        _banner(config)
        code = await sup.watch(stop)
    except (TimeoutError, RuntimeError) as exc:
        logger.error("start-up failed: %s", exc)
        code = 1
    finally:
        print("stopping...", flush=True)
        await sup.stop_all()
    return code


def _banner(config: object) -> None:
    from vance.config import Config

    assert isinstance(config, Config)
    gw = f"{config.gateway.host}:{config.gateway.port}"
    store = (
        "embedded FerretDB (SQLite) in " + config.data_dir
        if config.embedded_store
        else ("MongoDB at MONGODB_URI")
    )
    lines = [
        "",
        "Vancetope is running.",
        f"  gateway     http://{gw}   (GET /healthz)",
        f"  websocket   ws://{gw}/brain/default/ws",
        f'  login       POST http://{gw}/brain/default/access/dev  {{"password": "dev"}}',
        _seeded(config),
        f"  store       {store}",
        f"  workers     {config.worker.count} x {config.worker.slots} slots",
    ]
    if not is_configured(config.llm):
        lines.append(f"  model       NOT CONFIGURED: {NOT_CONFIGURED}")
    else:
        lines.append(f"  model       {config.llm.model or 'per-tier configuration'}")
    lines.append(
        f"  status      vance status   (children, restarts, last exits: {config.data_dir})"
    )
    lines.append("Press Ctrl-C to stop.")
    print("\n".join(lines), flush=True)


def _seeded(config: object) -> str:
    from vance.config import Config

    assert isinstance(config, Config)
    if not config.seed_defaults:
        return "  seeded      nothing (VANCE_SEED_DEFAULTS=false)"
    if not config.seed_dev_admin:
        return "  seeded      tenant 'default', project 'demo' (no dev admin: VANCE_SEED_DEV_ADMIN)"
    return (
        "  seeded      tenant 'default', user 'dev' (password 'dev', tenant admin), project 'demo'"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vance", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="start the store, the services and the workers")
    status = sub.add_parser(
        "status",
        help="each child of `vance run`: state, pid, restarts, last exit (exit code 0: all run)",
    )
    status.add_argument("--json", action="store_true", help="the status file as JSON")
    token = sub.add_parser(
        "service-token",
        help="print a service token for a trusted client of the gRPC API (docs/operations.md)",
    )
    token.add_argument("--name", required=True, help="who the token is for (its subject)")
    token.add_argument("--ttl-s", type=int, default=24 * 3600, help="lifetime in seconds")
    ns = parser.parse_args(argv)
    try:
        if ns.command == "run":
            import uvloop

            return uvloop.run(_run())
        if ns.command == "status":
            from vance.supervisor_status import show

            return show(load_config().data_dir, as_json=ns.json)
        if ns.command == "service-token":
            from vance.auth import mint_service_token, service_secret

            print(mint_service_token(service_secret(load_config()), ns.name, ns.ttl_s))
    except ConfigError as exc:
        print(f"vance: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
