"""Logging for every process: plain lines with a service prefix, or JSON when configured."""

from __future__ import annotations

import json
import logging
import sys
import time

from vance.config import LoggingConfig


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


_service = {"name": "vance"}


def service_name() -> str:
    """This process's service name, as given to setup_logging (its credential's subject)."""
    return _service["name"]


def setup_logging(config: LoggingConfig, service: str) -> None:
    _service["name"] = service
    handler = logging.StreamHandler(sys.stderr)
    if config.json_format:
        handler.setFormatter(_JsonFormatter())
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
