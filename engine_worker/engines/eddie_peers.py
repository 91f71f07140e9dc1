"""What Eddie knows of the user's other hubs (seed 001 §6, docs/architecture.md "Hubs that know
what each other did"): peer events taken into the chat as system lines (never spoken), the
peers' activity log in the model's context each turn, one spoken recap line when a session
starts or resumes after the other hubs did something, and the turn's own activity entry.

The activity comes with `hub_context` (process_service/hub/peers.py adds `peerActivity`), so
reading it costs the turn no call of its own; the turn's entry is one `hub_activity_record`."""

from __future__ import annotations

import logging
import time

from engine_worker.context import ThinkEngineContext
from engine_worker.engines.eddie_hub import HubContext
from vance.domain import (
    ChatMessage,
    ChatRole,
    PeerEvent,
    ProcessEvent,
    ProcessEventType,
    SteerMessage,
    UserChatInput,
)

logger = logging.getLogger(__name__)

RECORD_TOOL = "hub_activity_record"
# The kinds a recap speaks about (process_service/hub/activity.py RECAP_KINDS).
RECAP_KINDS = frozenset(
    {"PROJECT_CREATED", "PROJECT_ARCHIVED", "PROCESS_SPAWNED", "PROCESS_CHANGED", "PEER_NOTIFIED"}
)
NEW_SESSION_RECAP_MS = 24 * 3600 * 1000  # a new hub session recaps the other hubs' last day
PROMPT_ENTRIES = 50
_QUOTE = 120


def _cut(text: str, n: int = _QUOTE) -> str:
    s = " ".join(text.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _facts(event: PeerEvent) -> list[str]:
    facts = event.payload.get("facts")
    if isinstance(facts, list) and facts:
        return [str(f.get("summary", "")) for f in facts if isinstance(f, dict)]
    return [event.human_summary]


async def record(
    ctx: ThinkEngineContext, events: list[PeerEvent], history: list[ChatMessage]
) -> int:
    """Each peer event not yet in the chat becomes one system line (a PEER hook may have
    written it while the session was suspended; the resume turn then skips it)."""
    seen = {str(m.meta.get("peerEvent")) for m in history if m.meta.get("peerEvent")}
    written = 0
    for event in events:
        if event.idempotency_key in seen:
            continue
        seen.add(event.idempotency_key)
        facts = _facts(event)
        text = "Your other hub: " + "\n".join(f"- {f}" for f in facts)
        meta = {
            "peerEvent": event.idempotency_key,
            "peerType": event.type.value,
            "facts": len(facts),
            "sourceSession": event.source_session_id,
        }
        await ctx.chat.append(ChatRole.SYSTEM, text, meta)
        written += 1
    return written


def split(inbox: list[SteerMessage]) -> tuple[list[PeerEvent], list[SteerMessage]]:
    peers = [m for m in inbox if isinstance(m, PeerEvent)]
    return peers, [m for m in inbox if not isinstance(m, PeerEvent)]


def _ago(ms: int) -> str:
    s = max(0, ms // 1000)
    if s < 60:
        return "just now"
    if s < 5400:
        return f"{max(1, s // 60)} minutes ago"
    if s < 48 * 3600:
        return f"{s // 3600} hours ago"
    return f"{s // 86400} days ago"


def block(hub: HubContext) -> str:
    """The peers' activity for the system prompt, newest first."""
    entries = hub.peer_activity
    if not entries:
        return ""
    now = int(time.time() * 1000)
    lines = [f"- {_ago(now - (e.at_ms or now))}: {e.summary}" for e in entries[:PROMPT_ENTRIES]]
    return (
        "\n\n<peer-activity>What the user's other hub sessions (their other devices) did, "
        "newest first. You share the user's projects, facts and documents with them; this is "
        "what they know and you may not have heard yet:\n" + "\n".join(lines) + "\n</peer-activity>"
    )


def last_spoke_ms(history: list[ChatMessage]) -> int:
    return max((m.created_at_ms for m in history if m.role is ChatRole.ASSISTANT), default=0)


def recap_line(hub: HubContext, since_ms: int) -> str:
    """One short spoken line about what the other hubs did since `since_ms`, or ""."""
    entries = [e for e in hub.peer_activity if e.kind in RECAP_KINDS and e.at_ms > since_ms]
    if not entries:
        return ""
    now = int(time.time() * 1000)
    said = [e.summary.split(" for: ")[0] for e in entries[:2]]
    what = " and ".join(said)
    more = len(entries) - len(said)
    tail = f", and {more} more {'thing' if more == 1 else 'things'}" if more > 0 else ""
    when = _ago(now - (entries[0].at_ms or now))
    return f"Since we last spoke, your other hub {what}{tail} ({when})."


async def recap(
    ctx: ThinkEngineContext, hub: HubContext, history: list[ChatMessage], *, new: bool
) -> bool:
    """The bootstrap recap (seed 001 §6.5): spoken once when something happened since this
    session last spoke to the user; otherwise nothing extra."""
    since = last_spoke_ms(history)
    if new or not since:
        since = max(since, int(time.time() * 1000) - NEW_SESSION_RECAP_MS)
    line = recap_line(hub, since)
    if not line:
        return False
    await ctx.chat.append(ChatRole.ASSISTANT, line, {"action": "answer", "recap": True})
    return True


async def tell_blocked(ctx: ThinkEngineContext, event: ProcessEvent) -> None:
    """A worker waiting for the user is news for the other hubs at once (seed 001 §6.3): they
    may be where the user is now."""
    if event.type is not ProcessEventType.BLOCKED:
        return
    name = str(event.payload.get("project") or event.source_process_name or "a worker")
    args = {
        "type": "PROCESS_BLOCKED",
        "summary": f"{name} waits for an answer: {_cut(event.human_summary)}",
        "payload": {"processId": event.source_process_id, "project": name},
    }
    result = await ctx.tools.invoke("peer_notify", args, f"blocked-{event.idempotency_key}")
    if result.error:
        logger.warning("the other hubs were not told of %s: %s", name, result.error)


async def record_turn(ctx: ThinkEngineContext, inbox: list[SteerMessage], said: str) -> None:
    """The turn's entry in the activity log, for the other hubs' next turn."""
    words = " / ".join(_cut(m.content) for m in inbox if isinstance(m, UserChatInput))
    if words:
        kind, summary = "USER_STATEMENT", f'the user said "{words}"; Eddie: "{_cut(said)}"'
    else:
        kind, summary = "TOOL_CALL", f'told the user about their projects: "{_cut(said)}"'
    result = await ctx.tools.invoke(RECORD_TOOL, {"kind": kind, "summary": summary}, "activity")
    if result.error:
        logger.warning("activity of the turn not recorded: %s", result.error)
