"""The gateway's REST routes (docs/protocol.md "REST endpoints") as typed async calls."""

from __future__ import annotations

from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from vance_client.errors import VanceError
from vance_client.models import (
    Health,
    InboxItem,
    Project,
    SearchResult,
    Session,
    Settings,
    Token,
    User,
)

M = TypeVar("M", bound=BaseModel)


def http_base(url: str) -> str:
    """`localhost:8080`, `http://host:8080/` and `ws://host:8080` all name the same gateway."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    scheme, rest = url.split("://", 1)
    scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    return f"{scheme}://{rest}"


def ws_url(url: str, tenant: str) -> str:
    base = http_base(url)
    scheme, rest = base.split("://", 1)
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/brain/{tenant}/ws"


async def login(url: str, tenant: str, user: str, password: str, *, timeout: float = 15.0) -> Token:
    """`POST /brain/{tenant}/access/{user}`: a token for a password."""
    async with httpx.AsyncClient(base_url=http_base(url), timeout=timeout) as http:
        r = await http.post(f"/brain/{tenant}/access/{user}", json={"password": password})
        return _read(r, Token)


def _read(r: httpx.Response, model: type[M]) -> M:
    _raise_for(r)
    return model.model_validate(r.json())


def _raise_for(r: httpx.Response) -> None:
    if r.status_code >= 400:
        try:
            body: Any = r.json()
        except ValueError:
            body = r.text
        raise VanceError.from_body(r.status_code, body)


class Rest:
    """One tenant's REST routes with a bearer token. Use as `async with Rest(...) as rest`,
    or call `aclose()`; `VanceClient.rest` is one that lives as long as its client."""

    def __init__(
        self, url: str, tenant: str, token: str, *, profile: str = "", timeout: float = 15.0
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        if profile:
            headers["X-Vance-Profile"] = profile
        self.tenant = tenant
        self._http = httpx.AsyncClient(base_url=http_base(url), headers=headers, timeout=timeout)

    async def __aenter__(self) -> Rest:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def set_token(self, token: str) -> None:
        self._http.headers["Authorization"] = f"Bearer {token}"

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | list[tuple[str, Any]] | None = None,
    ) -> Any:
        r = await self._http.request(
            method, f"/brain/{self.tenant}{path}", json=json, params=params
        )
        _raise_for(r)
        return r.json()

    # --- tokens ---

    async def refresh(self) -> Token:
        return Token.model_validate(await self._call("POST", "/access/refresh"))

    async def logout(self) -> bool:
        """Revokes this client's token."""
        return bool((await self._call("POST", "/access/logout")).get("revoked"))

    async def revoke_user_tokens(self, username: str) -> None:
        await self._call("POST", f"/admin/users/{username}/revoke-tokens")

    async def create_user(self, username: str, password: str, roles: list[str] = []) -> User:  # noqa: B006
        body = {"username": username, "password": password, "roles": roles}
        return User.model_validate(await self._call("POST", "/admin/users", json=body))

    # --- sessions ---

    async def session(self, session_id: str) -> Session:
        return Session.model_validate(await self._call("GET", f"/session/{session_id}"))

    async def sessions(
        self,
        *,
        project_id: str = "",
        statuses: list[str] = [],  # noqa: B006
        tags: list[str] = [],  # noqa: B006
        include_archived: bool = False,
        limit: int = 0,
    ) -> list[Session]:
        params = _filters(project_id, statuses, tags, include_archived, limit)
        body = await self._call("GET", "/sessions", params=params)
        return [Session.model_validate(s) for s in body["sessions"]]

    async def search(
        self,
        query: str,
        *,
        project_id: str = "",
        statuses: list[str] = [],  # noqa: B006
        include_archived: bool = False,
        limit: int = 20,
    ) -> SearchResult:
        params = [("q", query), *_filters(project_id, statuses, [], include_archived, limit)]
        return SearchResult.model_validate(
            await self._call("GET", "/sessions/search", params=params)
        )

    async def update_metadata(self, session_id: str, **fields: Any) -> Session:
        """title, icon, color, tags, pinned (camelCase or snake_case names)."""
        return Session.model_validate(
            await self._call("PATCH", f"/session/{session_id}/metadata", json=fields)
        )

    async def archive(self, session_id: str) -> Session:
        return Session.model_validate(await self._call("POST", f"/session/{session_id}/archive"))

    async def reactivate(self, session_id: str, *, profile: str = "") -> Session:
        body = {"profile": profile} if profile else None
        return Session.model_validate(
            await self._call("POST", f"/session/{session_id}/reactivate", json=body)
        )

    async def resume(self, session_id: str) -> Session:
        return Session.model_validate(await self._call("POST", f"/session/{session_id}/resume"))

    async def extend(
        self, session_id: str, *, extend_by_ms: int = 0, transition_at: int = 0
    ) -> Session:
        body = {"extendByMs": extend_by_ms, "transitionAt": transition_at}
        return Session.model_validate(
            await self._call("POST", f"/session/{session_id}/extend", json=body)
        )

    async def delete(self, session_id: str) -> bool:
        return bool((await self._call("DELETE", f"/session/{session_id}")).get("deleted"))

    # --- hub: projects and inbox ---

    async def projects(self, *, kind: str = "", include_archived: bool = False) -> list[Project]:
        params = {"kind": kind, "includeArchived": str(include_archived).lower()}
        body = await self._call("GET", "/projects", params=params)
        return [Project.model_validate(p) for p in body["projects"]]

    async def delete_project(self, project_id: str) -> bool:
        return bool((await self._call("DELETE", f"/projects/{project_id}")).get("deleted"))

    async def inbox(self, *, unread_only: bool = False) -> list[InboxItem]:
        body = await self._call("GET", "/inbox", params={"unreadOnly": str(unread_only).lower()})
        return [InboxItem.model_validate(i) for i in body["items"]]

    async def inbox_item(self, item_id: str) -> InboxItem:
        return InboxItem.model_validate(await self._call("GET", f"/inbox/{item_id}"))

    async def mark_inbox_item(self, item_id: str, *, read: bool = True) -> InboxItem:
        return InboxItem.model_validate(
            await self._call("POST", f"/inbox/{item_id}/mark", json={"read": read})
        )

    async def answer_inbox_item(self, item_id: str, answer: str) -> InboxItem:
        return InboxItem.model_validate(
            await self._call("POST", f"/inbox/{item_id}/answer", json={"answer": answer})
        )

    # --- settings and health ---

    async def settings(self, *, project_id: str = "") -> Settings:
        path = f"/project/{project_id}/settings" if project_id else "/settings"
        return Settings.model_validate(await self._call("GET", path))

    async def update_settings(
        self,
        *,
        set: dict[str, Any] | None = None,
        unset: list[str] | None = None,
        project_id: str = "",
    ) -> Settings:
        path = f"/project/{project_id}/settings" if project_id else "/settings"
        body = {"set": set or {}, "unset": unset or []}
        return Settings.model_validate(await self._call("PATCH", path, json=body))

    async def health(self) -> Health:
        r = await self._http.get("/healthz")
        return Health.model_validate(r.json())


def _filters(
    project_id: str, statuses: list[str], tags: list[str], include_archived: bool, limit: int
) -> list[tuple[str, Any]]:
    params: list[tuple[str, Any]] = []
    if project_id:
        params.append(("projectId", project_id))
    params += [("status", s) for s in statuses]
    params += [("tag", t) for t in tags]
    if include_archived:
        params.append(("includeArchived", "true"))
    if limit:
        params.append(("limit", limit))
    return params
