"""gateway: the client WebSocket and REST front, translating frames to gRPC."""
