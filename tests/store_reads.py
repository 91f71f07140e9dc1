"""Counting the reads a client sends to one collection (a PyMongo command listener), for tests
that assert a copy is kept rather than read again."""

from __future__ import annotations

from pymongo import monitoring


class FindCounter(monitoring.CommandListener):
    """Counts the `find` commands on `collection` that a client sends."""

    def __init__(self, collection: str) -> None:
        self.collection = collection
        self.count = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name == "find" and event.command.get("find") == self.collection:
            self.count += 1

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass
