"""The group of a project, for the engine's scope (engine_worker/context.py `Scope.group`): read
from session_service's GetProject and held for TTL_S per project, so a turn costs no call while
its project's group is known. A project that cannot be read has no group for TTL_S."""

from __future__ import annotations

import logging
import time

from vance.v1 import session_pb2 as spb
from vance.v1 import session_pb2_grpc

logger = logging.getLogger(__name__)

TTL_S = 30.0
_MAX = 10_000


class ProjectGroups:
    def __init__(self, sessions: session_pb2_grpc.SessionServiceAsyncStub | None) -> None:
        self._sessions = sessions
        self._held: dict[tuple[str, str], tuple[float, str]] = {}

    async def of(self, tenant: str, project: str) -> str:
        if self._sessions is None or not project:
            return ""
        now = time.monotonic()
        hit = self._held.get((tenant, project))
        if hit is not None and hit[0] > now:
            return hit[1]
        try:
            found = await self._sessions.GetProject(
                spb.GetProjectRequest(tenant_id=tenant, project_id=project)
            )
            group = found.group
        except Exception:
            logger.info("group of project %s/%s not read", tenant, project, exc_info=True)
            group = ""
        if len(self._held) >= _MAX:
            self._held.clear()
        self._held[(tenant, project)] = (now + TTL_S, group)
        return group
