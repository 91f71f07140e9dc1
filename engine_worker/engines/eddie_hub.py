"""What Eddie knows of its hub each turn, read once from the `hub_context` tool's JSON result
(process_service/hub/tools.py, with `peerActivity` from process_service/hub/peers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class PeerActivity:
    """One entry of the user's other hubs' activity log (process_service/hub/activity.py)."""

    at_ms: int
    kind: str
    summary: str


@dataclass(frozen=True, slots=True)
class HubContext:
    language: str = "en"
    voice_rules: str = ""  # "" when no level (hub, tenant) stored rules for the language
    voice_rules_source: str = ""  # "hub" or "tenant"
    user_project: str = ""  # the user's hub project
    peer_activity: list[PeerActivity] = field(default_factory=list)  # newest first

    @classmethod
    def from_json(cls, raw: object) -> HubContext:
        """The tool's result as it came (JSON); what is missing or malformed is left out."""
        if not isinstance(raw, dict):
            return cls()
        rules = raw.get("voiceRules")
        entries = raw.get("peerActivity")
        return cls(
            language=str(raw.get("language") or "en"),
            voice_rules=rules.strip() and rules if isinstance(rules, str) else "",
            voice_rules_source=str(raw.get("voiceRulesSource") or ""),
            user_project=str(raw.get("userProject") or ""),
            peer_activity=[
                PeerActivity(
                    int(e.get("atMs", 0)), str(e.get("kind", "")), str(e.get("summary", ""))
                )
                for e in (entries if isinstance(entries, list) else [])
                if isinstance(e, dict)
            ],
        )
