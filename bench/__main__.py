"""`python -m bench`."""

from __future__ import annotations

from vance.grpc_env import apply_grpc_env

apply_grpc_env()  # bench starts the system's processes; gRPC reads the variables on import

from bench.run import main

main()
