"""Generated from protos/vance/internal/v1 by `make protos`."""
