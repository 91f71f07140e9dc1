"""Whose work a call touches: the calling process's tenant and owner, nobody else's. A tool never
takes a user id from its arguments, so no caller (a tenant admin's Eddie included) can name
another user's documents, notes or workspace."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from process_service.process_model import Process
from process_service.tool_args import ToolError

_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}$")


@dataclass(frozen=True)
class Owner:
    tenant_id: str
    user_id: str

    @classmethod
    def of(cls, caller: Process) -> Owner:
        tenant, user = caller.tenant_id, caller.owner_user_id
        if not tenant or not user:
            raise ToolError("this tool works on a user's own things; the caller has no user")
        return cls(tenant, user)

    def doc_id(self, *parts: str) -> str:
        """An `_id` of one of this user's things: JSON, so no id can run into another's."""
        return json.dumps([self.tenant_id, self.user_id, *parts], ensure_ascii=False)

    def dir_name(self, part: str) -> str:
        """A directory name for a tenant or user id: itself when harmless, else a digest."""
        value = self.tenant_id if part == "tenant" else self.user_id
        if _SAFE.match(value):
            return value
        return "h" + hashlib.sha256(value.encode()).hexdigest()[:32]
