"""Generated from protos/vance/v1 by `make protos`."""
