"""What a user token may call, method by method (vance/authz.py applies it; a service token may
call everything). A method missing here is for services only.

The identity in a request body (`tenant_id`, `owner_user_id`, `caller`) is checked against the
token, never trusted on its own: a body naming another tenant, another user or a role the token
does not carry is refused. Session-scoped methods look the session's owner up through the
serving process's `Owners` (a session's owner and a process's session never change, so the
answers are cached).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from vance.auth import Identity
from vance.errors import NotFoundError, PermissionDeniedError


class Owners(Protocol):
    """Looks up whose a session is, as the service that serves the call can see it."""

    async def session_owner(self, session_id: str) -> tuple[str, str] | None:
        """(tenant_id, owner's username); None when there is no such session."""

    async def process_session(self, process_id: str) -> tuple[str, str] | None:
        """(tenant_id, session_id) of a process; None when there is no such process."""


Rule = Callable[[Any, Identity, Owners | None], Awaitable[None]]

_SESSION = "vance.v1.SessionService/"
_PROCESS = "vance.v1.ProcessService/"
_RECIPE = "vance.v1.RecipeService/"
_TOKENS = "vance.v1.TokenService/"
_WORK = "vance.v1.UserWorkService/"
_KNOWLEDGE = "vance.v1.KnowledgeService/"


def _deny(message: str, reason: str) -> PermissionDeniedError:
    return PermissionDeniedError(message, reason=reason)


def _tenant(request: Any, who: Identity) -> None:
    if request.tenant_id != who.tenant_id:
        raise _deny("the token is for another tenant", "tenant_mismatch")


def _caller(request: Any, who: Identity) -> None:
    """A body's `caller` may only repeat what the token says (the servicer acts on the token's
    identity, see session_service/protos.py)."""
    if not request.HasField("caller"):
        return
    if request.caller.user_id and request.caller.user_id != who.name:
        raise _deny("the caller in the request is not the token's user", "caller_mismatch")
    if not set(request.caller.roles) <= set(who.roles):
        raise _deny("the caller in the request claims roles the token lacks", "caller_mismatch")


def _admin(who: Identity) -> None:
    if not who.is_admin:
        raise _deny("tenant admins only", "admin_required")


async def _own_session(owners: Owners | None, who: Identity, session_id: str) -> None:
    if owners is None:
        raise _deny("this service cannot check session ownership", "service_only")
    found = await owners.session_owner(session_id)
    if found is None:
        raise NotFoundError(f"no session {session_id!r}", reason="session_not_found")
    tenant, owner = found
    if tenant != who.tenant_id:
        raise _deny("the session belongs to another tenant", "tenant_mismatch")
    if owner != who.name and not who.is_admin:
        raise _deny("the session belongs to another user", "session_foreign")


async def _own_process(owners: Owners | None, who: Identity, process_id: str, session: str) -> None:
    if owners is None:
        raise _deny("this service cannot check session ownership", "service_only")
    found = await owners.process_session(process_id)
    if found is None:
        raise NotFoundError(f"no process {process_id!r}", reason="process_not_found")
    if found[0] != who.tenant_id:
        raise _deny("the process belongs to another tenant", "tenant_mismatch")
    await _own_session(owners, who, found[1])
    if session and found[1] != session:
        # The servicer answers for a process outside the named session (not found, or a
        # rejected steer); the caller must own that session too.
        await _own_session(owners, who, session)


async def tenant_only(request: Any, who: Identity, owners: Owners | None) -> None:
    _tenant(request, who)


async def tenant_caller(request: Any, who: Identity, owners: Owners | None) -> None:
    _tenant(request, who)
    _caller(request, who)


async def tenant_admin(request: Any, who: Identity, owners: Owners | None) -> None:
    _tenant(request, who)
    _admin(who)


async def any_admin(request: Any, who: Identity, owners: Owners | None) -> None:
    """Deployment-wide operations the gateway offers tenant admins (the engine catalog is one
    per recipe_service, see gateway/rest_catalog.py)."""
    _admin(who)


async def get_user(request: Any, who: Identity, owners: Owners | None) -> None:
    _tenant(request, who)
    if request.username != who.name:
        _admin(who)


async def own_tokens(request: Any, who: Identity, owners: Owners | None) -> None:
    """A user's own revocation record (the gateway reads it per socket, logout writes it);
    another user's: tenant admins."""
    _tenant(request, who)
    if request.username != who.name:
        _admin(who)


async def create_session(request: Any, who: Identity, owners: Owners | None) -> None:
    _tenant(request, who)
    if request.owner_user_id != who.name:
        _admin(who)


async def tenant_session(request: Any, who: Identity, owners: Owners | None) -> None:
    _tenant(request, who)
    await _own_session(owners, who, request.session_id)


async def session_only(request: Any, who: Identity, owners: Owners | None) -> None:
    """Requests naming a session but no tenant: the token's tenant is the one looked in."""
    await _own_session(owners, who, request.session_id)


async def process_or_session(request: Any, who: Identity, owners: Owners | None) -> None:
    if request.process_id:
        await _own_process(owners, who, request.process_id, request.session_id)
    else:
        await _own_session(owners, who, request.session_id)


async def process_ref(request: Any, who: Identity, owners: Owners | None) -> None:
    ref = request.target if hasattr(request, "target") else request
    if ref.process_id:
        await _own_process(owners, who, ref.process_id, ref.session_id)
    else:
        await _own_session(owners, who, ref.session_id)


async def steer(request: Any, who: Identity, owners: Owners | None) -> None:
    if request.message.sender_process_id:
        raise _deny("a user cannot steer as a process", "sender_forbidden")
    await process_ref(request, who, owners)


async def process_id(request: Any, who: Identity, owners: Owners | None) -> None:
    await _own_process(owners, who, request.process_id, "")


async def own_user(request: Any, who: Identity, owners: Owners | None) -> None:
    """The token's own user only, admins included: a hub is its owner's alone
    (session_service/hub/home.py)."""
    _tenant(request, who)
    if request.username != who.name:
        raise _deny("only the user themself may open their hub", "hub_foreign")


async def own_inbox(request: Any, who: Identity, owners: Owners | None) -> None:
    """The user's inbox (session_service/hub/user_inbox.py): the token's own user only."""
    ref = request.ref if hasattr(request, "ref") else request
    _tenant(ref, who)
    if ref.user_id != who.name:
        raise _deny("an inbox is its user's alone", "inbox_foreign")


async def own_documents(request: Any, who: Identity, owners: Owners | None) -> None:
    """The user's documents (process_service/user_work/): the token's own user only, tenant
    admins included (seed 001: a hub's content is its user's alone)."""
    if request.owner.tenant_id != who.tenant_id:
        raise _deny("the token is for another tenant", "tenant_mismatch")
    if request.owner.user_id != who.name:
        raise _deny("documents are their user's alone", "documents_foreign")


async def project_knowledge(request: Any, who: Identity, owners: Owners | None) -> None:
    """A project's memory and RAG documents: the token's tenant; whether the user sees the
    project is process_service's check (process_service/knowledge/service.py)."""
    ref = request if hasattr(request, "project_id") else request.project
    if ref.tenant_id != who.tenant_id:
        raise _deny("the token is for another tenant", "tenant_mismatch")
    if getattr(request, "added_by", who.name) != who.name:
        raise _deny("added_by must be the token's user", "caller_mismatch")


RULES: dict[str, Rule] = {
    f"/{_SESSION}{name}": rule
    for name, rule in {
        "GetUser": get_user,
        "CreateUser": tenant_admin,
        "GetProject": tenant_only,
        "CreateProject": tenant_admin,
        "CreateSession": create_session,
        "GetSession": tenant_session,
        "ListSessions": tenant_caller,
        "UpdateMetadata": tenant_caller,
        "SearchSessions": tenant_caller,
        "BindSession": tenant_caller,
        "Heartbeat": session_only,
        "ReleaseBind": session_only,
        "MonitorSession": tenant_caller,
        "SuspendSession": tenant_caller,
        "ResumeSession": tenant_caller,
        "ExtendSession": tenant_caller,
        "ArchiveSession": tenant_caller,
        "ReactivateSession": tenant_caller,
        "DeleteSession": tenant_caller,
        "GetSettings": tenant_caller,
        "UpdateSettings": tenant_caller,
        # The hub (EnsureHome and AddInboxItem are for services only).
        "OpenHubSession": own_user,
        "ListProjects": tenant_caller,
        "DeleteProject": tenant_caller,
        "ArchiveProject": tenant_caller,
        "GetUserSetting": get_user,
        "ListInboxItems": own_inbox,
        "GetInboxItem": own_inbox,
        "MarkInboxItem": own_inbox,
        "AnswerInboxItem": own_inbox,
    }.items()
}
RULES.update(
    {
        f"/{_PROCESS}{name}": rule
        for name, rule in {
            "GetProcess": process_id,
            "ListProcesses": session_only,
            "Steer": steer,
            "Pause": process_ref,
            "Resume": process_ref,
            "Stop": process_ref,
            "PauseSession": session_only,
            "ListChatMessages": process_or_session,
            "SubscribeSession": session_only,
            "SubscribeSessionBatches": session_only,
            "ListWorkers": any_admin,
            # Plan mode and the connection's profile (process_service/lifecycle/plan_rpcs.py).
            "DecidePlan": process_or_session,
            "GetPlan": process_ref,
            "SetConnectionProfile": session_only,
        }.items()
    }
)
RULES.update({f"/{_WORK}{name}": own_documents for name in ("ListDocuments", "ReadDocument")})
RULES.update(
    {
        f"/{_KNOWLEDGE}{name}": project_knowledge
        for name in (
            "ListProjectMemory",
            "DeleteProjectMemory",
            "AddRagDocument",
            "ListRagDocuments",
            "DeleteRagDocument",
        )
    }
)
RULES.update(
    {
        f"/{_TOKENS}{name}": rule
        for name, rule in {
            "GetTokenRevocations": own_tokens,
            "RevokeTokens": own_tokens,
        }.items()
    }
)
RULES.update(
    {
        f"/{_RECIPE}{name}": rule
        for name, rule in {
            "ListRecipes": tenant_only,
            "GetRecipe": tenant_only,
            "ListManuals": tenant_only,
            "ReadManual": tenant_only,
            "CreateRecipe": tenant_admin,
            "UpdateRecipe": tenant_admin,
            "DeleteRecipe": tenant_admin,
            "PutManual": tenant_admin,
            "DeleteManual": tenant_admin,
            "ReloadEngines": any_admin,
        }.items()
    }
)
