"""A process's plan (process_service/lifecycle/plans.py) as records: built from and written to the
`plans` collection only by process_service/store/plan_docs.py. Never changed once built:
`dataclasses.replace` makes a changed copy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PlanStep:
    id: str  # t1..tN in order
    text: str
    status: str  # one of plans.TODO_STATUSES
    project: str = ""  # "" when the step names none


@dataclass(frozen=True, slots=True)
class Plan:
    """The current plan of one process (stored under the process id)."""

    process_id: str
    session_id: str
    process_name: str
    engine: str
    plan_id: str
    title: str
    steps: tuple[PlanStep, ...]
    mode: str  # `normal`, `plan` while a proposal waits, `execution` while its todos run
    status: str  # `proposed`, `approved`, `rejected`, `done`
    propose_key: str  # the idempotency key of the proposing tool call
    version: int  # compared and set on every change
    decide_key: str = ""  # the user's decision's idempotency key, once decided
    decision: str = ""
