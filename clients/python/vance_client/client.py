"""`VanceClient`: the typed API of the gateway's WebSocket protocol, one method per client frame
(docs/protocol.md "Client frames"), on a `Connection` that reconnects and replays from the last
seq seen (vance_client/connection.py). Use it as `async with VanceClient(url, tenant, token)`."""

from __future__ import annotations

import contextlib
from typing import Any

from vance_client import requests as rq
from vance_client.connection import Connection, Event, Link
from vance_client.errors import ConnectionLost
from vance_client.models import ChatMessage, ProcessInfo

__all__ = ["Event", "Link", "VanceClient"]


class VanceClient(Connection):
    """A reconnecting, typed client of one tenant's gateway for one token."""

    async def create_session(self, project_id: str, **options: Any) -> rq.SessionOpened:
        """`session-create`: a new session in a project, bound to this client from seq 0."""
        return await self._bind(rq.SessionCreate(project_id=project_id, **options), monitor=False)

    async def open_hub(self) -> rq.SessionOpened:
        """The user's hub (Eddie): `session-create{hub: true}`."""
        return await self._bind(rq.SessionCreate(hub=True), monitor=False)

    async def resume_session(
        self, session_id: str, *, since_seq: int | None = None, takeover: bool = True
    ) -> rq.SessionOpened:
        """`session-resume`: binds a session; events after `since_seq` (default: the highest
        seq this client has seen of it) follow. `takeover`: take the bind from another
        connection of the same user (a dropped socket the gateway has not noticed yet)."""
        since = self._seqs.get(session_id, 0) if since_seq is None else since_seq
        req = rq.SessionResume(session_id=session_id, since_seq=since, takeover=takeover)
        return await self._bind(req, monitor=False)

    async def monitor_session(
        self, session_id: str, *, since_seq: int | None = None
    ) -> rq.SessionOpened:
        since = self._seqs.get(session_id, 0) if since_seq is None else since_seq
        return await self._bind(
            rq.SessionMonitor(session_id=session_id, since_seq=since), monitor=True
        )

    async def unbind(self) -> None:
        """`session-unbind`: leaves the session (no onDisconnect); its events stop."""
        await self._request(rq.SessionUnbind())
        self.session_id, self.opened = None, None

    async def steer(
        self,
        content: str,
        *,
        process_name: str | None = None,
        process_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> rq.SteerReply:
        return await self._request(
            rq.ProcessSteer(
                content=content,
                process_name=process_name,
                process_id=process_id,
                idempotency_key=idempotency_key,
            )
        )

    async def command(
        self,
        command: str,
        params: dict[str, Any] | None = None,
        *,
        process_name: str | None = None,
        process_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> rq.CommandReply:
        return await self._request(
            rq.ProcessCommand(
                command=command,
                params=params,
                process_name=process_name,
                process_id=process_id,
                idempotency_key=idempotency_key,
            )
        )

    async def pause_session(self) -> list[ProcessInfo]:
        """The ESC key: pauses every RUNNING and INIT process of the session."""
        return (await self._request(rq.PauseSession())).processes

    async def pause(
        self, *, process_name: str | None = None, process_id: str | None = None
    ) -> ProcessInfo:
        return await self._request(
            rq.ProcessPause(process_name=process_name, process_id=process_id)
        )

    async def resume(
        self, *, process_name: str | None = None, process_id: str | None = None
    ) -> ProcessInfo:
        return await self._request(
            rq.ProcessResume(process_name=process_name, process_id=process_id)
        )

    async def stop(
        self, *, process_name: str | None = None, process_id: str | None = None
    ) -> ProcessInfo:
        return await self._request(rq.ProcessStop(process_name=process_name, process_id=process_id))

    async def processes(self, *, include_terminated: bool = False) -> list[ProcessInfo]:
        req = rq.ProcessList(include_terminated=include_terminated or None)
        return (await self._request(req)).processes

    async def messages(
        self, *, process_name: str | None = None, process_id: str | None = None, limit: int = 0
    ) -> list[ChatMessage]:
        req = rq.ProcessMessages(process_name=process_name, process_id=process_id, limit=limit)
        return (await self._request(req)).messages

    async def ping(self) -> rq.Pong:
        return await self._request(rq.Ping())

    async def register_tools(self, tools: list[dict[str, Any]]) -> rq.ClientToolsRegistered:
        """`client-tool-register` for the bound session: the server forgets them when the
        socket leaves the session, so send it again after every bind and reconnect."""
        return await self._request(rq.ClientToolRegister(tools=tools))

    async def tool_result(self, result: rq.ClientToolResult) -> rq.ClientToolAccepted:
        """Answers a `client-tool-invoke`; `404 unknown_call` once the server stopped waiting."""
        return await self._request(result)

    async def logout(self) -> None:
        """Revokes the token and ends the connection for good (`Link("closed")` follows)."""
        self._closed = True
        with contextlib.suppress(ConnectionLost):
            await self._request(rq.Logout(), wait_ready=False)
