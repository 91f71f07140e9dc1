"""Logging for every process: plain lines with a service prefix, or JSON lines when configured
(docs/operations.md, "Logs")."""

from __future__ import annotations

import logging
import sys

from pythonjsonlogger.json import JsonFormatter

from vance.config import LoggingConfig
from vance.observability.logcontext import ContextFilter

# JSON lines: these fields, then the ids the context knows (session_id, process_id, turn_id).
_JSON_FIELDS = "%(ts)s %(levelname)s %(service)s %(name)s %(message)s"
_JSON_RENAMES = {"levelname": "level", "name": "logger", "message": "msg", "exc_info": "exc"}


_service = {"name": "vance"}


def service_name() -> str:
    """This process's service name, as given to setup_logging (its credential's subject)."""
    return _service["name"]


def setup_logging(config: LoggingConfig, service: str) -> None:
    _service["name"] = service
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter(service))
    if config.json_format:
        handler.setFormatter(JsonFormatter(_JSON_FIELDS, rename_fields=_JSON_RENAMES))
    else:
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s %(levelname)s {service} %(name)s: %(message)s")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(config.level.upper())
    # Third-party chatter stays out of INFO.
    for noisy in ("LiteLLM", "litellm", "httpx", "pymongo", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
