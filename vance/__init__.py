"""Vancetope shared library: configuration, logging, store, server bootstrap, errors, ids, clock."""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
