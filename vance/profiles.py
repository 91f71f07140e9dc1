"""Client profiles and what each may do (docs/protocol.md "Profiles").

`clientToolsEnabled`: tools that run on the user's machine may be offered (the connection can
answer them). `canMediate`: the client can follow a `switch-to` and come back (`/hub`), so Eddie
may hand the user to a worker. `forwardingTagsExpected`: the client groups frames by their
`forwardedBy` tag. A profile the registry does not know gets the `default` capabilities.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    client_tools_enabled: bool
    can_mediate: bool
    forwarding_tags_expected: bool

    def as_dict(self) -> dict[str, bool]:
        return {
            "clientToolsEnabled": self.client_tools_enabled,
            "canMediate": self.can_mediate,
            "forwardingTagsExpected": self.forwarding_tags_expected,
        }


PROFILES: dict[str, Capabilities] = {
    "foot": Capabilities(
        client_tools_enabled=True, can_mediate=True, forwarding_tags_expected=True
    ),
    "web": Capabilities(
        client_tools_enabled=False, can_mediate=True, forwarding_tags_expected=True
    ),
    # No slash command and no button back to the hub: a mediated user would be stranded.
    "mobile": Capabilities(
        client_tools_enabled=True, can_mediate=False, forwarding_tags_expected=False
    ),
    # Eddie speaking to a worker: the user's socket is bound to the hub, not to the worker's
    # session, so a client tool call of the worker would have nowhere to go.
    "eddie": Capabilities(
        client_tools_enabled=False, can_mediate=False, forwarding_tags_expected=True
    ),
    "daemon": Capabilities(
        client_tools_enabled=True, can_mediate=False, forwarding_tags_expected=False
    ),
    "default": Capabilities(
        client_tools_enabled=False, can_mediate=False, forwarding_tags_expected=False
    ),
}

# Tools running on the user's machine declare these profiles (`allowed_profiles`); the pool of
# any other profile never contains them (tool_service/pool.py).
CLIENT_TOOL_PROFILES = sorted(p for p, c in PROFILES.items() if c.client_tools_enabled)


def capabilities(profile: str) -> Capabilities:
    return PROFILES.get(profile) or PROFILES["default"]
