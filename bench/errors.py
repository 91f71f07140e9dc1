"""The one error the benchmark raises: a message that says what went wrong and where."""

from __future__ import annotations


class BenchError(Exception):
    pass
