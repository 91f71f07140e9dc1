"""Vancetope shared library: configuration, logging, store, server bootstrap, errors, ids, clock.

Importing it changes nothing: the gRPC environment is set by each entry point
(vance/grpc_env.py)."""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
