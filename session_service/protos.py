"""session_service conversions between domain models and protos."""

from __future__ import annotations

from typing import cast

from session_service.access.actor import Actor
from session_service.domain.models import (
    AccentColor,
    LifecycleProps,
    NewSessionOptions,
    Project,
    ProjectKind,
    Session,
    SessionMetadata,
    SessionStatus,
    User,
)
from session_service.lifecycle.sweepers import SweepReport
from session_service.search.query import MessageSnippet, SearchResult, SessionFilter, SessionHit
from session_service.search.session_metadata import MetadataPatch
from session_service.settings.session_settings import SettingsView
from vance.auth import current_identity
from vance.domain import OnDisconnect, OnIdle, OnSuspend, SuspendCause
from vance.internal.v1 import recipe_internal_pb2 as ripb
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import common_pb2 as pb
from vance.v1 import recipe_pb2 as rpb
from vance.v1 import session_pb2 as spb


def user_to_proto(u: User) -> spb.User:
    return spb.User(
        tenant_id=u.tenant_id, username=u.username, roles=u.roles, created_at_ms=u.created_at_ms
    )


def kind_to_proto(k: ProjectKind) -> pb.ProjectKind:
    return cast(pb.ProjectKind, pb.ProjectKind.Value(f"PROJECT_KIND_{k.value}"))


def kind_from_proto(n: int) -> ProjectKind:
    if n == 0:
        return ProjectKind.NORMAL
    return ProjectKind(pb.ProjectKind.Name(n).removeprefix("PROJECT_KIND_"))


def project_to_proto(p: Project) -> spb.Project:
    return spb.Project(
        tenant_id=p.tenant_id,
        project_id=p.project_id,
        title=p.title,
        kind=kind_to_proto(p.kind),
        created_at_ms=p.created_at_ms,
        owner_user_id=p.owner_user_id,
        group=p.group,
        archived=p.archived,
    )


def status_to_proto(s: SessionStatus) -> pb.SessionStatus:
    return cast(pb.SessionStatus, pb.SessionStatus.Value(f"SESSION_STATUS_{s.value}"))


def session_to_proto(s: Session) -> spb.Session:
    sources = {
        name: f"LIFECYCLE_SOURCE_{value}"
        for name, value in s.lifecycle_sources.items()
        if name in rpb.LifecycleSources.DESCRIPTOR.fields_by_name
    }
    # The enum fields go in by name (the proto enums are other types than vance.domain's).
    return spb.Session(
        session_id=s.session_id,
        tenant_id=s.tenant_id,
        project_id=s.project_id,
        owner_user_id=s.owner_user_id,
        status=status_to_proto(s.status),
        chat_process_id=s.chat_process_id,
        chat_process_name=s.chat_process_name,
        chat_engine=s.chat_engine,
        profile=s.profile,
        created_at_ms=s.created_at_ms,
        last_activity_at_ms=s.last_activity_at_ms,
        engine_activity_at_ms=s.engine_activity_at_ms,
        metadata=metadata_to_proto(s.metadata),
        lifecycle=lifecycle_to_proto(s.lifecycle),
        lifecycle_sources=rpb.LifecycleSources(**sources),
        bootstrap_recipe=s.bootstrap_recipe,
        allow_multiple_clients=s.allow_multiple_clients,
        bound_connection_id=s.bound_connection_id or "",
        suspend_cause=f"SUSPEND_CAUSE_{s.suspend_cause.value}"
        if s.suspend_cause
        else pb.SUSPEND_CAUSE_UNSPECIFIED,
        suspended_at_ms=s.suspended_at_ms or 0,
        transition_at_ms=s.transition_at_ms or 0,
        close_reason=f"CLOSE_REASON_{s.close_reason.value}"
        if s.close_reason
        else pb.CLOSE_REASON_UNSPECIFIED,
        closed_at_ms=s.closed_at_ms or 0,
        archived_at_ms=s.archived_at_ms or 0,
        reactivated_at_ms=s.reactivated_at_ms or 0,
        generation=s.generation,
        participant_count=len(s.participants),
    )


# ---- lifecycle ----

_LIFECYCLE_ENUMS = {
    "on_disconnect": "ON_DISCONNECT_",
    "on_idle": "ON_IDLE_",
    "on_suspend": "ON_SUSPEND_",
}


def lifecycle_to_proto(props: LifecycleProps) -> rpb.LifecycleProperties:
    return rpb.LifecycleProperties(
        on_disconnect=f"ON_DISCONNECT_{props.on_disconnect.value}",
        on_idle=f"ON_IDLE_{props.on_idle.value}",
        on_suspend=f"ON_SUSPEND_{props.on_suspend.value}",
        idle_timeout_ms=props.idle_timeout_ms,
        suspend_keep_duration_ms=props.suspend_keep_duration_ms,
    )


def options_from_resolved(
    r: ripb.ResolvedLifecycle, *, allow_multiple_clients: bool, bound_connection_id: str | None
) -> NewSessionOptions:
    """A new session's options from recipe_service's resolution (the properties and their
    sources) and the caller's binding options."""
    lc = r.lifecycle
    props = LifecycleProps(
        on_disconnect=OnDisconnect(
            rpb.OnDisconnect.Name(lc.on_disconnect).removeprefix("ON_DISCONNECT_")
        ),
        on_idle=OnIdle(rpb.OnIdle.Name(lc.on_idle).removeprefix("ON_IDLE_")),
        on_suspend=OnSuspend(rpb.OnSuspend.Name(lc.on_suspend).removeprefix("ON_SUSPEND_")),
        idle_timeout_ms=lc.idle_timeout_ms,
        suspend_keep_duration_ms=lc.suspend_keep_duration_ms,
    )
    sources = {
        f.name: rpb.LifecycleSource.Name(getattr(r.sources, f.name)).removeprefix(
            "LIFECYCLE_SOURCE_"
        )
        for f in rpb.LifecycleSources.DESCRIPTOR.fields
    }
    return NewSessionOptions(
        lifecycle=props,
        lifecycle_sources=sources,
        bootstrap_recipe=r.recipe_name,
        allow_multiple_clients=allow_multiple_clients,
        bound_connection_id=bound_connection_id,
    )


def caller_from_proto(c: spb.Caller) -> Actor:
    """A call made with a user's token acts as that user, whatever the body says (vance/policy.py
    has already refused a body claiming more); a service may name the user it acts for."""
    identity = current_identity.get()
    if identity is not None and not identity.is_service:
        return Actor(user_id=identity.name, is_admin=identity.is_admin)
    return Actor(user_id=c.user_id, is_admin="admin" in c.roles)


def suspend_cause_from_proto(value: int) -> SuspendCause:
    """UNSPECIFIED means FORCED: an admin suspend stops work that was in flight."""
    if value == 0:
        return SuspendCause.FORCED
    return SuspendCause(pb.SuspendCause.Name(value).removeprefix("SUSPEND_CAUSE_"))


# ---- metadata and search ----


def color_to_proto(c: AccentColor | None) -> spb.AccentColor:
    if c is None:
        return spb.ACCENT_COLOR_UNSPECIFIED
    return cast(spb.AccentColor, spb.AccentColor.Value(f"ACCENT_COLOR_{c.name}"))


def metadata_to_proto(m: SessionMetadata) -> spb.SessionMetadata:
    return spb.SessionMetadata(
        title=m.title or "",
        title_auto_generated=m.title_auto_generated,
        icon=m.icon or "",
        color=color_to_proto(m.color),
        tags=m.tags,
        pinned=m.pinned,
        user_touched_at_ms=m.user_touched_at_ms or 0,
    )


def patch_from_proto(r: spb.UpdateMetadataRequest) -> MetadataPatch:
    return MetadataPatch(
        title=r.title if r.HasField("title") else None,
        icon=r.icon if r.HasField("icon") else None,
        color=r.color if r.HasField("color") else None,
        tags=list(r.tags.tags) if r.HasField("tags") else None,
        pinned=r.pinned if r.HasField("pinned") else None,
    )


def session_status_from_proto(n: int) -> SessionStatus:
    return SessionStatus(pb.SessionStatus.Name(n).removeprefix("SESSION_STATUS_"))


def filter_from_proto(r: spb.ListSessionsRequest | spb.SearchSessionsRequest) -> SessionFilter:
    return SessionFilter(
        project_id=r.project_id,
        owner_user_id=r.owner_user_id,
        statuses=tuple(session_status_from_proto(n) for n in r.statuses if n),
        tags=tuple(r.tags),
        include_archived=r.include_archived,
    )


def snippet_to_proto(m: MessageSnippet) -> spb.MessageSnippet:
    role = f"CHAT_ROLE_{m.role.upper()}"
    return spb.MessageSnippet(
        message_id=m.message_id,
        process_name=m.process_name,
        role=cast(pb.ChatRole, pb.ChatRole.Value(role) if role in pb.ChatRole.keys() else 0),
        created_at_ms=m.created_at_ms,
        text=m.snippet.text,
        highlights=[spb.TextRange(start=a, end=b) for a, b in m.snippet.highlights],
    )


def hit_to_proto(h: SessionHit) -> spb.SessionHit:
    return spb.SessionHit(
        session=session_to_proto(h.session),
        score=h.score,
        title_match="title" in h.matched,
        tag_match="tags" in h.matched,
        conversation_match="conversation" in h.matched,
        snippets=[snippet_to_proto(s) for s in h.snippets],
    )


def search_to_proto(r: SearchResult) -> spb.SearchSessionsResponse:
    return spb.SearchSessionsResponse(hits=[hit_to_proto(h) for h in r.hits])


def sweep_report_to_proto(r: SweepReport) -> sipb.RunSweepsResponse:
    return sipb.RunSweepsResponse(
        looked_at=r.looked_at,
        idle_suspended=r.idle_suspended,
        archived=r.archived,
        auto_closed=r.auto_closed,
        abandoned=r.abandoned,
        unbound=r.unbound,
        resumed=r.resumed,
        skipped=r.skipped,
        duration_us=r.duration_us,
    )


def settings_to_proto(v: SettingsView) -> spb.Settings:
    return spb.Settings(
        tenant_id=v.tenant_id, project_id=v.project_id, values=v.values, effective=v.effective
    )
