"""Proto <-> domain conversions shared by process_service, engine_worker and the gateway."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypeVar, cast

from vance import domain as d
from vance.internal.v1 import worker_pb2 as wkpb
from vance.protoutil import dict_to_struct, from_value, struct_to_dict, to_value
from vance.v1 import common_pb2 as pb

E = TypeVar("E", bound=StrEnum)


# Conversions already made: enums are few and fixed, and every process, event and report
# converts several (a profile under `make bench` had the lookups at 6% of process_service's CPU).
_TO_PROTO: dict[tuple[Any, str, StrEnum], int] = {}
_FROM_PROTO: dict[tuple[Any, str, type[StrEnum], int], StrEnum] = {}


def enum_to_proto(value: StrEnum | None, proto_enum: Any, prefix: str) -> int:
    if value is None:
        return 0
    key = (proto_enum, prefix, value)
    number = _TO_PROTO.get(key)
    if number is None:
        number = _TO_PROTO[key] = int(proto_enum.Value(f"{prefix}_{value.value}"))
    return number


def enum_from_proto(number: int, proto_enum: Any, prefix: str, domain_enum: type[E]) -> E | None:
    if number == 0:
        return None
    key = (proto_enum, prefix, domain_enum, number)
    found = _FROM_PROTO.get(key)
    if found is None:
        found = _FROM_PROTO[key] = domain_enum(proto_enum.Name(number).removeprefix(prefix + "_"))
    return cast(E, found)


def status_to_proto(s: d.ProcessStatus | None) -> pb.ProcessStatus:
    return cast(pb.ProcessStatus, enum_to_proto(s, pb.ProcessStatus, "PROCESS_STATUS"))


def status_from_proto(n: int) -> d.ProcessStatus | None:
    return enum_from_proto(n, pb.ProcessStatus, "PROCESS_STATUS", d.ProcessStatus)


def close_reason_to_proto(r: d.CloseReason | None) -> pb.CloseReason:
    return cast(pb.CloseReason, enum_to_proto(r, pb.CloseReason, "CLOSE_REASON"))


def close_reason_from_proto(n: int) -> d.CloseReason | None:
    return enum_from_proto(n, pb.CloseReason, "CLOSE_REASON", d.CloseReason)


def role_to_proto(r: d.ChatRole) -> pb.ChatRole:
    return cast(pb.ChatRole, enum_to_proto(r, pb.ChatRole, "CHAT_ROLE"))


def role_from_proto(n: int) -> d.ChatRole:
    role = enum_from_proto(n, pb.ChatRole, "CHAT_ROLE", d.ChatRole)
    if role is None:
        raise ValueError("chat role is required")
    return role


def outcome_to_proto(o: d.DeliveryOutcome) -> pb.DeliveryOutcome:
    return cast(pb.DeliveryOutcome, enum_to_proto(o, pb.DeliveryOutcome, "DELIVERY_OUTCOME"))


def outcome_from_proto(n: int) -> d.DeliveryOutcome:
    outcome = enum_from_proto(n, pb.DeliveryOutcome, "DELIVERY_OUTCOME", d.DeliveryOutcome)
    if outcome is None:
        raise ValueError("delivery outcome is required")
    return outcome


def call_to_proto(c: d.LifecycleCall) -> wkpb.LifecycleCall:
    return cast(wkpb.LifecycleCall, enum_to_proto(c, wkpb.LifecycleCall, "LIFECYCLE_CALL"))


def call_from_proto(n: int) -> d.LifecycleCall:
    call = enum_from_proto(n, wkpb.LifecycleCall, "LIFECYCLE_CALL", d.LifecycleCall)
    return call or d.LifecycleCall.STEER


def steer_to_proto(m: d.SteerMessage) -> pb.SteerMessage:
    out = pb.SteerMessage(
        id=m.id,
        idempotency_key=m.idempotency_key,
        at_ms=m.at_ms,
        target_process_id=m.target_process_id,
        sender_process_id=m.sender_process_id,
    )
    match m:
        case d.UserChatInput():
            out.user_chat_input.CopyFrom(
                pb.UserChatInput(
                    from_user=m.from_user,
                    content=m.content,
                    ask_id=m.ask_id,
                    forwarded_by=dict_to_struct(m.forwarded_by) if m.forwarded_by else None,
                )
            )
        case d.ProcessEvent():
            out.process_event.CopyFrom(
                pb.ProcessEvent(
                    source_process_id=m.source_process_id,
                    source_process_name=m.source_process_name,
                    type=cast(
                        pb.ProcessEventType,
                        enum_to_proto(m.type, pb.ProcessEventType, "PROCESS_EVENT_TYPE"),
                    ),
                    human_summary=m.human_summary,
                    payload=dict_to_struct(m.payload),
                )
            )
        case d.Reply():
            out.reply.CopyFrom(pb.Reply(in_reply_to=m.in_reply_to, content=m.content))
        case d.ToolResult():
            out.tool_result.CopyFrom(
                pb.ToolResult(
                    tool_call_id=m.tool_call_id,
                    tool_name=m.tool_name,
                    status=cast(
                        pb.ToolCallStatus,
                        enum_to_proto(m.status, pb.ToolCallStatus, "TOOL_CALL_STATUS"),
                    ),
                    result=to_value(m.result),
                    error=m.error,
                )
            )
        case d.ExternalCommand():
            out.external_command.CopyFrom(
                pb.ExternalCommand(command=m.command, params=dict_to_struct(m.params))
            )
        case d.InboxAnswer():
            out.inbox_answer.CopyFrom(
                pb.InboxAnswer(inbox_item_id=m.inbox_item_id, answer=to_value(m.answer))
            )
        case d.PeerEvent():
            out.peer_event.CopyFrom(
                pb.PeerEvent(
                    source_session_id=m.source_session_id,
                    user_id=m.user_id,
                    type=cast(
                        pb.PeerEventType,
                        enum_to_proto(m.type, pb.PeerEventType, "PEER_EVENT_TYPE"),
                    ),
                    human_summary=m.human_summary,
                    payload=dict_to_struct(m.payload),
                )
            )
        case _:
            raise ValueError(f"unknown steer message {type(m).__name__}")
    return out


def steer_from_proto(p: pb.SteerMessage) -> d.SteerMessage:
    base: dict[str, Any] = {
        "id": p.id,
        "idempotency_key": p.idempotency_key,
        "at_ms": p.at_ms,
        "target_process_id": p.target_process_id,
        "sender_process_id": p.sender_process_id,
    }
    which = p.WhichOneof("kind")
    match which:
        case "user_chat_input":
            u = p.user_chat_input
            return d.UserChatInput(
                **base,
                # Named too, so that every field is given (domain.share_fields_set).
                kind="USER_CHAT_INPUT",
                from_user=u.from_user,
                content=u.content,
                ask_id=u.ask_id,
                forwarded_by=struct_to_dict(u.forwarded_by) if u.HasField("forwarded_by") else {},
            )
        case "process_event":
            e = p.process_event
            etype = enum_from_proto(
                e.type, pb.ProcessEventType, "PROCESS_EVENT_TYPE", d.ProcessEventType
            )
            if etype is None:
                raise ValueError("process_event.type is required")
            return d.ProcessEvent(
                **base,
                source_process_id=e.source_process_id,
                source_process_name=e.source_process_name,
                type=etype,
                human_summary=e.human_summary,
                payload=struct_to_dict(e.payload),
            )
        case "reply":
            return d.Reply(**base, in_reply_to=p.reply.in_reply_to, content=p.reply.content)
        case "tool_result":
            t = p.tool_result
            status = enum_from_proto(
                t.status, pb.ToolCallStatus, "TOOL_CALL_STATUS", d.ToolCallStatus
            )
            return d.ToolResult(
                **base,
                tool_call_id=t.tool_call_id,
                tool_name=t.tool_name,
                status=status or d.ToolCallStatus.SUCCESS,
                result=from_value(t.result) if t.HasField("result") else None,
                error=t.error,
            )
        case "external_command":
            c = p.external_command
            return d.ExternalCommand(**base, command=c.command, params=struct_to_dict(c.params))
        case "inbox_answer":
            a = p.inbox_answer
            return d.InboxAnswer(
                **base,
                inbox_item_id=a.inbox_item_id,
                answer=from_value(a.answer) if a.HasField("answer") else None,
            )
        case "peer_event":
            e2 = p.peer_event
            ptype = enum_from_proto(e2.type, pb.PeerEventType, "PEER_EVENT_TYPE", d.PeerEventType)
            return d.PeerEvent(
                **base,
                source_session_id=e2.source_session_id,
                user_id=e2.user_id,
                type=ptype or d.PeerEventType.STATUS,
                human_summary=e2.human_summary,
                payload=struct_to_dict(e2.payload),
            )
        case _:
            raise ValueError("steer message has no variant set")


def process_to_proto(p: d.ThinkProcess) -> pb.ThinkProcess:
    return pb.ThinkProcess(
        id=p.id,
        tenant_id=p.tenant_id,
        project_id=p.project_id,
        session_id=p.session_id,
        name=p.name,
        title=p.title,
        goal=p.goal,
        engine=p.engine,
        engine_version=p.engine_version,
        recipe_name=p.recipe_name,
        parent_process_id=p.parent_process_id,
        owner_user_id=p.owner_user_id,
        status=status_to_proto(p.status),
        close_reason=close_reason_to_proto(p.close_reason),
        close_detail=p.close_detail,
        recipe_snapshot=dict_to_struct(p.recipe_snapshot),
        params=dict_to_struct(p.params),
        created_at_ms=p.created_at_ms,
        updated_at_ms=p.updated_at_ms,
        pending_count=p.pending_count,
        chat_history_summary=p.chat_history_summary,
        chat_history_summary_through=p.chat_history_summary_through,
        last_suspend_cause=p.last_suspend_cause,
        persistent_tool_calls=p.persistent_tool_calls,
        connection_profile=p.connection_profile,
    )


def process_from_proto(p: pb.ThinkProcess) -> d.ThinkProcess:
    return d.ThinkProcess(
        id=p.id,
        tenant_id=p.tenant_id,
        project_id=p.project_id,
        session_id=p.session_id,
        name=p.name,
        title=p.title,
        goal=p.goal,
        engine=p.engine,
        engine_version=p.engine_version,
        recipe_name=p.recipe_name,
        parent_process_id=p.parent_process_id,
        owner_user_id=p.owner_user_id,
        status=status_from_proto(p.status) or d.ProcessStatus.INIT,
        close_reason=close_reason_from_proto(p.close_reason),
        close_detail=p.close_detail,
        recipe_snapshot=struct_to_dict(p.recipe_snapshot),
        params=struct_to_dict(p.params),
        created_at_ms=p.created_at_ms,
        updated_at_ms=p.updated_at_ms,
        pending_count=p.pending_count,
        chat_history_summary=p.chat_history_summary,
        chat_history_summary_through=p.chat_history_summary_through,
        last_suspend_cause=p.last_suspend_cause,
        persistent_tool_calls=p.persistent_tool_calls,
        connection_profile=p.connection_profile,
    )


def chat_to_proto(m: d.ChatMessage) -> pb.ChatMessage:
    return pb.ChatMessage(
        id=m.id,
        session_id=m.session_id,
        think_process_id=m.think_process_id,
        process_name=m.process_name,
        role=role_to_proto(m.role),
        content=m.content,
        created_at_ms=m.created_at_ms,
        meta=dict_to_struct(m.meta),
    )


def chat_from_proto(p: pb.ChatMessage) -> d.ChatMessage:
    return d.ChatMessage(
        id=p.id,
        session_id=p.session_id,
        think_process_id=p.think_process_id,
        process_name=p.process_name,
        role=role_from_proto(p.role),
        content=p.content,
        created_at_ms=p.created_at_ms,
        meta=struct_to_dict(p.meta),
    )
