"""An observer of a process (process_service/lifecycle/observations.py) as a record: built from and
written to the `observations` collection only by process_service/store/observation_docs.py."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Observer:
    """How one observer process (an Eddie) hears of one observed process."""

    mode: str  # one of observations.MODES
    session_id: str  # the observer's session, where forwarded frames go
    engine: str  # the observer's engine, named in `forwardedBy`
    project: str  # the observed process's project, as the observer connected to it
