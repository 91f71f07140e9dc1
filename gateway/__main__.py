"""`python -m gateway`."""

from vance.grpc_env import apply_grpc_env

apply_grpc_env()  # before gRPC is imported: it reads the variables then

from gateway.app import main

main()
