"""Eddie's guards, enforced in code (seed 001 §5.5-5.6, §8), not left to the prompt:
- spawn and steer tools are refused on a turn that carries only events (a worker's event must
  not make Eddie start or steer more work by itself: a loop risk); ask_user stays allowed;
- worker Markdown, code or long text is never spoken: a relay of it becomes `relay_inbox`
  (long) or an `answer` whose spoken line is short and whose `info` holds the text."""

from __future__ import annotations

import re

from vance.domain import ExternalCommand, InboxAnswer, SteerMessage, UserChatInput

SPAWN_AND_STEER = frozenset(
    {
        "process_create",
        "process_create_delegate",
        "project_create",
        "project_steer",
        "answer_question",
        "process_steer",
    }
)
EVENT_TURN_REFUSAL = (
    "refused: this turn carries only events from workers, and spawn or steer tools may only "
    "follow the user's own request. Tell the user (answer, relay) or ask them (ask_user)."
)
SPEAKABLE_CHARS = 300  # longer worker output is not read aloud
INBOX_CHARS = 1200  # longer still goes to the inbox rather than beside the spoken line
_WRITTEN = re.compile(
    r"```|^\s{0,3}#{1,6}\s|^\s*[-*+]\s|^\s*\d+[.)]\s|\*\*|__|^\s*>|\|.*\||\[[^\]]*\]\([^)]*\)|`",
    re.MULTILINE,
)


def user_turn(inbox: list[SteerMessage]) -> bool:
    """The user acted: typed, answered an inbox item, or sent a command (a plan decision)."""
    return any(isinstance(m, UserChatInput | InboxAnswer | ExternalCommand) for m in inbox)


def refusals(inbox: list[SteerMessage]) -> dict[str, str]:
    return {} if user_turn(inbox) else dict.fromkeys(SPAWN_AND_STEER, EVENT_TURN_REFUSAL)


def written(text: str) -> bool:
    """Markdown, code or a text too long to speak."""
    return len(text) > SPEAKABLE_CHARS or bool(_WRITTEN.search(text))


def belongs_in_inbox(text: str) -> bool:
    return len(text) > INBOX_CHARS or "```" in text
