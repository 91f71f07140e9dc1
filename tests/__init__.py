"""The test suite. gRPC fork support is off before anything imports grpc: see vance/__init__.py
(the harness starts every service as a subprocess of this process)."""

import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
