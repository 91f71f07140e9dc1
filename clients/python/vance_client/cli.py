"""The `vance` command: `login`, `logout` and `chat` talk to a gateway (this package); `run`,
`status` and `service-token` belong to the server and are handed to `vance.cli` when it is
installed."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import importlib
import sys
import time

from vance_client import credentials
from vance_client.errors import VanceError
from vance_client.rest import Rest, http_base, login

DEFAULT_URL = "http://localhost:8080"
SERVER_COMMANDS = {"run", "status", "service-token"}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in SERVER_COMMANDS:
        return _server(args)
    ns = _parser().parse_args(args)
    try:
        if ns.command == "login":
            return _login(ns)
        if ns.command == "logout":
            return asyncio.run(_logout())
        return _chat(ns)
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vance",
        description="Vancetope's terminal client. `vance run` starts the system (server install).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="start the whole system (needs the server package)")
    sub.add_parser("status", help="the supervisor's children, restarts, last exits (server)")
    sub.add_parser("service-token", help="print a service token (needs the server package)")
    li = sub.add_parser("login", help="sign in and keep the token in the config directory")
    li.add_argument("--url", default=None, help=f"the gateway (default {DEFAULT_URL})")
    li.add_argument("--tenant", default=None, help="default: 'default'")
    li.add_argument("--user", default=None, help="your user name")
    li.add_argument("--password", default=None, help="default: asked for, not echoed")
    sub.add_parser("logout", help="revoke the saved token and forget it")
    chat = sub.add_parser("chat", help="chat with the hub (Eddie) or a project's Arthur")
    chat.add_argument("--project", default=None, help="a project session instead of the hub")
    chat.add_argument("--session", default=None, help="resume this session")
    chat.add_argument("--url", default=None, help="override the saved gateway")
    chat.add_argument("--tenant", default=None, help="override the saved tenant")
    chat.add_argument("--user", default=None, help="sign in as this user first")
    chat.add_argument("--password", default=None, help="with --user: the password")
    chat.add_argument(
        "--workspace",
        default=None,
        help="host client tools (files, commands) confined to this folder",
    )
    chat.add_argument(
        "--allow", action="store_true", help="with --workspace: writes and commands without asking"
    )
    return parser


def _server(args: list[str]) -> int:
    try:
        server = importlib.import_module("vance.cli")
    except ImportError:
        print(
            f"vance: '{args[0]}' needs the Vancetope server (in its checkout: make run)",
            file=sys.stderr,
        )
        return 2
    code: int = server.main(args)
    return code


def _login(ns: argparse.Namespace) -> int:
    saved = credentials.load()
    url = http_base(ns.url or (saved.url if saved else DEFAULT_URL))
    tenant = ns.tenant or (saved.tenant if saved else "default")
    user = ns.user or (saved.user if saved else "") or input("user: ").strip()
    password = ns.password if ns.password is not None else getpass.getpass("password: ")
    try:
        token = asyncio.run(login(url, tenant, user, password))
    except VanceError as exc:
        print(f"vance: sign-in refused: {exc.message or exc.reason}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"vance: cannot reach {url}: {exc}", file=sys.stderr)
        return 1
    path = credentials.save(
        credentials.Credentials(
            url=url, tenant=tenant, user=user, token=token.token, expires_at=token.expires_at
        )
    )
    print(f"Signed in as {user} (tenant {tenant}) at {url}; token saved in {path}")
    return 0


async def _logout() -> int:
    saved = credentials.load()
    if saved is None:
        print("Not signed in.")
        return 0
    try:
        async with Rest(saved.url, saved.tenant, saved.token) as rest:
            await rest.logout()
        note = "token revoked"
    except (VanceError, OSError) as exc:
        # Forget it anyway: the user asked to be signed out here; the token expires on its own.
        note = f"could not revoke the token at {saved.url} ({exc}); it expires on its own"
    credentials.forget()
    print(f"Signed out ({note}).")
    return 0


def _chat(ns: argparse.Namespace) -> int:
    if ns.user:
        code = _login(ns)
        if code:
            return code
    saved = credentials.load()
    if saved is None:
        print("vance: not signed in; run `vance login` first", file=sys.stderr)
        return 1
    if saved.expires_at and saved.expires_at < time.time() * 1000:
        print("vance: the saved token has expired; run `vance login` again", file=sys.stderr)
        return 1
    try:
        from vance_client.terminal.app import run_chat
    except ImportError as exc:
        print(
            f"vance: the terminal client needs its extra ({exc.name} is missing): "
            "pip install 'vance-client[terminal]'",
            file=sys.stderr,
        )
        return 2
    url = http_base(ns.url or saved.url)
    return run_chat(
        url=url,
        tenant=ns.tenant or saved.tenant,
        token=saved.token,
        project=ns.project,
        session=ns.session,
        workspace=ns.workspace,
        allow=ns.allow,
    )


if __name__ == "__main__":
    raise SystemExit(main())
