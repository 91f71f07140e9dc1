"""Vancetope shared library: configuration, logging, store, server bootstrap, errors, ids, clock."""

import os

# gRPC's fork handlers restart its poller in a forked child; a child that then closes its
# descriptors before exec (subprocess with close_fds, as vance/supervisor.py starts every
# service) can abort on the poller's closed epoll descriptor (grpc/grpc#43055, grpcio >=
# 1.81). Our children exec at once and never use the parent's gRPC, so fork support is off
# in every process that imports vance before gRPC starts (tests/ and bench/ import it first).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
