"""The benchmark: `make bench` (= `python -m bench`) starts the whole system on loopback and
measures steer latency, turn throughput, server CPU per turn and process_service memory."""

# Before anything imports grpc: `vance` turns gRPC's fork support off (vance/__init__.py), and
# the benchmark starts every service as a subprocess of this process.
import vance  # noqa: F401
