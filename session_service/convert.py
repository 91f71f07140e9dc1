"""session_service conversions between domain models and protos."""

from __future__ import annotations

from typing import cast

from session_service.models import Project, ProjectKind, Session, SessionStatus, User
from vance.v1 import common_pb2 as pb
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
    )


def status_to_proto(s: SessionStatus) -> pb.SessionStatus:
    return cast(pb.SessionStatus, pb.SessionStatus.Value(f"SESSION_STATUS_{s.value}"))


def session_to_proto(s: Session) -> spb.Session:
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
    )
