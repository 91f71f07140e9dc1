"""Vancetope shared library: configuration, logging, store, server bootstrap, errors, ids, clock."""

import os

# gRPC's fork handlers restart its poller in a forked child; a child that then closes its
# descriptors before exec (subprocess with close_fds, as vance/supervisor.py starts every
# service) can abort on the poller's closed epoll descriptor (grpc/grpc#43055, grpcio >=
# 1.81). Our children exec at once and never use the parent's gRPC, so fork support is off
# in every process that imports vance before gRPC starts (tests/ and bench/ import it first).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

# gRPC's EventEngine-based client and listener (its defaults since grpcio 1.6x) hand every
# completion across one more thread than its older polling path does. With those two off, an
# echo call between two of our processes costs 0.20 ms of client and 0.30-0.34 ms of server CPU
# instead of 0.24-0.28 and 0.36-0.41, and under `make bench` a turn costs 12-14% less CPU (eight
# of nine alternating runs; docs/operations.md, "gRPC"). gRPC reads the variable when it is
# imported, so it reaches our services through the environment of the process that starts
# them: the supervisor imports vance before gRPC, and the Dockerfile sets it for compose.
os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client,-event_engine_listener")

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
