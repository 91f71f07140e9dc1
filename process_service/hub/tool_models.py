"""The hub tools' arguments (validated once, by parse_args) and answers (records, JSON only in
the tool host): process_service/hub/tools.py."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from process_service.hub.activity import ActivityEntry
from process_service.lifecycle.observations import MODES
from process_service.tool_args import OptText, Text, ToolArgs, ToolResult, reason


def _known_mode(mode: str) -> str:
    if mode and mode not in MODES:
        raise reason(f"channelMode must be one of {', '.join(MODES)}")
    return mode


Mode = Annotated[OptText, AfterValidator(_known_mode)]


# ---- arguments ----


class CreateArgs(ToolArgs):
    name: Text
    channel_mode: Mode = ""  # DEFAULT_MODE when not given
    title: OptText = ""
    recipe: OptText = ""
    steer_content: OptText = ""


class NamedArgs(ToolArgs):
    name: Text


class OpenArgs(ToolArgs):
    name: Text
    channel_mode: Mode = ""  # the hub's present mode, else DEFAULT_MODE, when not given


class KindArgs(ToolArgs):
    kind: OptText = ""


class ObserveArgs(ToolArgs):
    channel_mode: Annotated[Text, AfterValidator(_known_mode)]
    process_id: Text


class CommandArgs(ToolArgs):
    command: Text
    process_id: Text


class ForwardArgs(ToolArgs):
    title: Text
    body: Text


class SwitchToArgs(ToolArgs):
    target: Text
    voice_announcement: OptText = ""


class VoiceRulesArgs(ToolArgs):
    language: Text
    rules: Text


# ---- results ----


class ProjectCreated(ToolResult):
    project: str
    kind: str
    session_id: str
    chat_process_id: str
    chat_engine: str
    channel_mode: str
    steered: bool


class ProjectEntry(ToolResult):
    name: str
    title: str
    kind: str
    archived: bool


class ProjectList(ToolResult):
    projects: list[ProjectEntry]


class SessionProcess(ToolResult):
    id: str
    name: str
    engine: str
    status: str


class ProjectSession(ToolResult):
    session_id: str
    chat_process_id: str | None
    processes: list[SessionProcess]


class ProjectOpened(ToolResult):
    project: str
    title: str
    kind: str
    archived: bool
    sessions: list[ProjectSession]
    connected_to: str | None
    channel_mode: str | None


class ProjectArchived(ToolResult):
    project: str
    archived: bool


class Observing(ToolResult):
    process_id: str
    channel_mode: str


class Commanded(ToolResult):
    process_id: str
    status: str


class InboxForwarded(ToolResult):
    id: str
    title: str


class SwitchTo(ToolResult):
    """Also the `switch-to` notice the hub's session gets (docs/protocol.md)."""

    target_session_id: str
    target_project_id: str
    target_process_name: str
    voice_announcement: str | None


class HubContext(ToolResult):
    OMIT_NONE = frozenset({"voice_rules", "voice_rules_source", "peer_activity"})

    language: str
    user_project: str
    voice_rules: str | None = None
    voice_rules_source: str | None = None
    peer_activity: list[ActivityEntry] | None = None  # added by hub_peers.after_tool


class VoiceRulesStored(ToolResult):
    language: str
    stored: bool
