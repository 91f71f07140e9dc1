"""Value ranges of the integers clients send, by what the number means (docs/protocol.md,
"Limits"). gateway/limits.py refuses integers no proto field can carry; these bounds are
tighter where the services do arithmetic with the value: a duration is added to a timestamp
(session_service/lifecycle/rules.py: `suspended_at + suspendKeepDurationMs`, transitions.py:
`activity + idleTimeoutMs`), and a sum past int64 cannot be stored (BSON) or sent (protobuf).
With both bounds below, any timestamp plus any duration stays far inside int64."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

# 100 years: longer than any lifecycle anyone means, short enough to add to any timestamp.
MAX_DURATION_MS = 100 * 365 * 24 * 3600 * 1000
# 9999-12-31T23:59:59.999Z, as milliseconds since the epoch.
MAX_EPOCH_MS = 253_402_300_799_999

DurationMs = Annotated[StrictInt, Field(ge=0, le=MAX_DURATION_MS)]
EpochMs = Annotated[StrictInt, Field(ge=0, le=MAX_EPOCH_MS)]
