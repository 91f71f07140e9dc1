"""Which leases a worker's heartbeat renews (process_service/runtime/lanes.py `renewal_due`):
only those that would otherwise run below the floor before the next heartbeat, so a short
turn costs no renewal and a running turn never loses its lane while its worker heartbeats."""

from __future__ import annotations

import pytest

from process_service.runtime.lanes import renewal_due
from vance.config import LanesConfig

DEFAULTS = LanesConfig()  # 15 s lease, 3 s heartbeat: what `make run` ships
TESTS = LanesConfig(lease_ms=6_000)  # the test systems' lease (tests/harness.py)


def _run(config: LanesConfig, phase_ms: int, turn_ms: int) -> tuple[int, int]:
    """A turn taken at 0 whose worker heartbeats every heartbeat_ms from `phase_ms`, renewing
    what is due. Returns (renewals, the least lease left at any heartbeat)."""
    lease_until = config.lease_ms
    renewals, least = 0, config.lease_ms
    beat = phase_ms
    while beat < turn_ms:
        least = min(least, lease_until - beat)
        assert lease_until > beat, "the lease ran out while the worker heartbeat"
        if renewal_due(config, lease_until, beat):
            lease_until = beat + config.lease_ms
            renewals += 1
        beat += config.heartbeat_ms
    return renewals, least


@pytest.mark.parametrize("phase_ms", [0, 1, 1_500, 2_999])
def test_a_hosted_model_answer_costs_no_renewal(phase_ms: int) -> None:
    # A 1.5 s answer (the real-pace bench's model) and a 3 s one: no heartbeat renews them.
    assert _run(DEFAULTS, phase_ms, 1_500)[0] == 0
    assert _run(DEFAULTS, phase_ms, 3_000)[0] == 0


@pytest.mark.parametrize("phase_ms", [0, 700, 2_999])
def test_a_long_turn_keeps_its_lane_renewed_every_other_heartbeat(phase_ms: int) -> None:
    renewals, least = _run(DEFAULTS, phase_ms, 120_000)
    beats = (120_000 - phase_ms + DEFAULTS.heartbeat_ms - 1) // DEFAULTS.heartbeat_ms
    assert beats // 2 - 2 <= renewals <= beats // 2 + 1
    # A worker that stops heartbeating holds the turn for at least 9 s more (the floor).
    assert least >= DEFAULTS.lease_ms - 2 * DEFAULTS.heartbeat_ms


@pytest.mark.parametrize("phase_ms", [1, 1_000, 2_999])
def test_a_short_lease_is_renewed_at_every_heartbeat(phase_ms: int) -> None:
    renewals, least = _run(TESTS, phase_ms, 60_000)
    beats = (60_000 - phase_ms + TESTS.heartbeat_ms - 1) // TESTS.heartbeat_ms
    assert renewals == beats
    assert least >= TESTS.lease_ms // 2
