"""The test suite. `vance` is imported first, before anything imports grpc: it turns gRPC's
fork support off (vance/__init__.py), and the harness starts every service as a subprocess of
this process."""

import vance  # noqa: F401
