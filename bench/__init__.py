"""The benchmark: `make bench` (= `python -m bench`) starts the whole system on loopback and
measures steer latency, turn throughput, server CPU per turn and process_service memory."""

import os

# gRPC fork support off before anything imports grpc: see vance/__init__.py (the benchmark
# starts every service as a subprocess of this process).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
