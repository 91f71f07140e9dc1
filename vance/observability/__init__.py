"""Metrics (metrics.py), traces (tracing.py) and the log context (logcontext.py) of every
process; docs/operations.md, "Observability"."""
