"""Typed clients of the services, one class per peer service.

Domain modules talk to a peer through these classes and get domain values back
(vance/domain.py), never raw stubs or protos; gRPC errors arrive as `VanceError`
(vance/errors.py) with the peer's status and reason. Each client has a `Protocol` beside it,
so a module names what it needs and not the transport.
"""
