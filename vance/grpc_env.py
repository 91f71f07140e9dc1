"""The gRPC environment variables our processes run with, set by each entry point.

gRPC reads these when it is imported, so an entry point calls `apply_grpc_env()` before it
imports anything that imports grpc, and the supervisor (vance/supervisor.py) passes them to
every child it starts; the Dockerfile sets them for compose and Kubernetes. An operator's own
value of either variable wins."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

GRPC_ENV = {
    # gRPC's fork handlers restart its poller in a forked child; a child that then closes its
    # descriptors before exec (subprocess with close_fds, as vance/supervisor.py starts every
    # service) can abort on the poller's closed epoll descriptor (grpc/grpc#43055, grpcio >=
    # 1.81). Our children exec at once and never use the parent's gRPC, so fork support is off.
    "GRPC_ENABLE_FORK_SUPPORT": "false",
    # gRPC's EventEngine-based client and listener (its defaults since grpcio 1.6x) hand every
    # completion across one more thread than its older polling path does. With those two off,
    # an echo call between two of our processes costs 0.20 ms of client and 0.30-0.34 ms of
    # server CPU instead of 0.24-0.28 and 0.36-0.41, and under `make bench` a turn costs 12-14%
    # less CPU (eight of nine alternating runs; docs/operations.md, "gRPC").
    "GRPC_EXPERIMENTS": "-event_engine_client,-event_engine_listener",
}


def apply_grpc_env(env: MutableMapping[str, str] | None = None) -> None:
    """Sets each variable that `env` (the process environment by default) does not set yet."""
    target = os.environ if env is None else env
    for key, value in GRPC_ENV.items():
        target.setdefault(key, value)
