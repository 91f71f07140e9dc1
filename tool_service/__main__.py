"""`python -m tool_service`."""

from vance.grpc_env import apply_grpc_env

apply_grpc_env()  # before gRPC is imported: it reads the variables then

from tool_service.server import main

main()
