"""vance_client: a typed async client of the Vancetope gateway (docs/clients.md)."""

from vance_client.client import Event, Link, VanceClient
from vance_client.errors import ConnectionLost, VanceError
from vance_client.frames import (
    ChatMessageAppended,
    ChatMessageStreamChunk,
    ClientToolInvoke,
    ErrorFrame,
    Frame,
    InboxItemAdded,
    PlanProposed,
    ProcessModeChanged,
    ProcessProgress,
    ProcessSpawned,
    SwitchTo,
    TodosUpdated,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownFrame,
    Welcome,
    parse_frame,
)
from vance_client.models import ChatMessage, InboxItem, Option, ProcessInfo, Session
from vance_client.rest import Rest, login

__all__ = [
    "ChatMessage",
    "ChatMessageAppended",
    "ChatMessageStreamChunk",
    "ClientToolInvoke",
    "ConnectionLost",
    "ErrorFrame",
    "Event",
    "Frame",
    "InboxItem",
    "InboxItemAdded",
    "Link",
    "Option",
    "PlanProposed",
    "ProcessInfo",
    "ProcessModeChanged",
    "ProcessProgress",
    "ProcessSpawned",
    "Rest",
    "Session",
    "SwitchTo",
    "TodosUpdated",
    "ToolCallCompleted",
    "ToolCallStarted",
    "UnknownFrame",
    "VanceClient",
    "VanceError",
    "Welcome",
    "login",
    "parse_frame",
]
