"""The settings engines read and write: typed keys, looked up through
process -> session -> project -> group -> tenant (innermost wins), written at a chosen level.

They live in the `settings` collection beside the tenant and project documents of
session_service/settings/session_settings.py (same shape: `values: [{key, value}]` and a version
`v`), under
`<tenant>:session:<id>`, `<tenant>:process:<id>` and `<tenant>:group:<group>`. Tenant and
project values of these keys can also be set by admins through UpdateSettings
(settings/session_settings.py
registers them). A project names its group (`Project.group`, set when it is created and never
changed), so the project -> group step is read once per project and kept in memory. One resolve
is one `_id $in` read.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from session_service.settings.knowledge_settings import KNOWLEDGE_KEYS
from session_service.settings.settings_docs import SettingsDocs
from session_service.store.raw import Db
from session_service.store.session_store import SessionStore
from vance.errors import InvalidArgumentError

PROCESS, SESSION, PROJECT, GROUP, TENANT = "PROCESS", "SESSION", "PROJECT", "GROUP", "TENANT"
CHAIN = (PROCESS, SESSION, PROJECT, GROUP, TENANT)
_GROUP_CACHE = 10_000

DEFAULT_CHAT_ENGINE = "session.defaultChatEngine"
MAX_CONTEXT_TOKENS = "arthur.maxContextTokens"
CHAT_LANGUAGE = "chat.language"
INCLUDE_MEMORY = "arthur.includeProjectMemorySummary"

_ENGINE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


def _engine(raw: str) -> str:
    if not _ENGINE_NAME.match(raw.strip()):
        raise ValueError("must be an engine name (lowercase letters, digits, '-')")
    return raw.strip()


def _tokens(raw: str) -> str:
    if not raw.strip().isdigit() or not 1_000 <= int(raw) <= 2_000_000:
        raise ValueError("must be a whole number of tokens from 1000 to 2000000")
    return str(int(raw))


def _language(raw: str) -> str:
    # The same rule as settings/session_settings.py's `chat.language` (Eddie reads it too): a
    # language code.
    value = raw.strip().lower()
    if not re.fullmatch(r"[a-z]{2,3}(-[a-z0-9]{2,8})?", value):
        raise ValueError("must be a language code such as en, de or pt-br")
    return value


def _flag(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValueError("must be true or false")
    return value


ENGINE_KEYS: dict[str, Callable[[str], str]] = {
    DEFAULT_CHAT_ENGINE: _engine,
    MAX_CONTEXT_TOKENS: _tokens,
    CHAT_LANGUAGE: _language,
    INCLUDE_MEMORY: _flag,
    **KNOWLEDGE_KEYS,  # memory, RAG and Arthur's model (settings/knowledge_settings.py)
}


@dataclass(frozen=True)
class Scope:
    tenant_id: str
    project_id: str = ""
    session_id: str = ""
    process_id: str = ""
    group_id: str = ""

    def doc_id(self, level: str) -> str:
        t = self.tenant_id
        if level == PROCESS:
            return f"{t}:process:{self.process_id}" if self.process_id else ""
        if level == SESSION:
            return f"{t}:session:{self.session_id}" if self.session_id else ""
        if level == PROJECT:
            return f"{t}:{self.project_id}" if self.project_id else ""
        if level == GROUP:
            return f"{t}:group:{self.group_id}" if self.group_id else ""
        return t


@dataclass(frozen=True)
class Resolved:
    key: str
    value: str
    level: str


def check(key: str, raw: str) -> str:
    validator = ENGINE_KEYS.get(key)
    if validator is None:
        raise InvalidArgumentError(
            f"unknown engine setting {key!r}; known: {', '.join(sorted(ENGINE_KEYS))}",
            reason="unknown_setting",
        )
    try:
        return validator(raw)
    except ValueError as exc:
        raise InvalidArgumentError(
            f"setting {key}={raw!r} {exc}", reason="invalid_setting"
        ) from None


class EngineSettings:
    def __init__(self, db: Db, docs: SettingsDocs | None = None) -> None:
        self.docs = docs or SettingsDocs(db["settings"])
        self._store = SessionStore(db)
        self._groups: dict[str, str] = {}  # "<tenant>:<project>" -> its group ("" for none)

    async def _with_group(self, scope: Scope) -> Scope:
        if scope.group_id or not scope.project_id:
            return scope
        key = f"{scope.tenant_id}:{scope.project_id}"
        group = self._groups.get(key)
        if group is None:
            project = await self._store.project(scope.tenant_id, scope.project_id)
            if project is None:
                return scope  # no such project (yet): read again next time
            group = project.group
            if len(self._groups) >= _GROUP_CACHE:
                self._groups.clear()
            self._groups[key] = group
        return replace(scope, group_id=group)

    async def resolve(self, scope: Scope, keys: list[str] | None = None) -> dict[str, Resolved]:
        if not scope.tenant_id:
            raise InvalidArgumentError("tenant_id is required")
        scope = await self._with_group(scope)
        levels = [(lvl, scope.doc_id(lvl)) for lvl in CHAIN if scope.doc_id(lvl)]
        ids = [doc_id for _, doc_id in levels]
        docs = await self.docs.get_many(ids)
        out: dict[str, Resolved] = {}
        for level, doc_id in levels:  # innermost first: the first hit wins
            for key, value in docs.get(doc_id, {}).items():
                if key in ENGINE_KEYS and key not in out and (not keys or key in keys):
                    out[key] = Resolved(key, value, level)
        return out

    async def set(self, scope: Scope, level: str, key: str, raw: str) -> dict[str, Resolved]:
        """Sets (or, with an empty value, removes) `key` at `level`. A version compare-and-set,
        so concurrent writes of different keys both stay."""
        value = check(key, raw) if raw != "" else ""
        if level not in CHAIN:
            raise InvalidArgumentError("level must be PROCESS, SESSION, PROJECT, GROUP or TENANT")
        if level == GROUP:
            scope = await self._with_group(scope)
        doc_id = scope.doc_id(level)
        if not doc_id:
            raise InvalidArgumentError(f"the scope names no {level.lower()}")
        if key not in ENGINE_KEYS:
            check(key, "")

        def change(values: dict[str, str]) -> dict[str, str]:
            if value:
                return {**values, key: value}
            return {k: v for k, v in values.items() if k != key}

        await self.docs.update(doc_id, change)
        return await self.resolve(scope)


def default_chat_engine(settings: EngineSettings) -> Callable[[str, str], Awaitable[str]]:
    """For session-create: the `session.defaultChatEngine` of the project (or tenant), or ""."""

    async def lookup(tenant: str, project: str) -> str:
        found = await settings.resolve(Scope(tenant, project), [DEFAULT_CHAT_ENGINE])
        hit = found.get(DEFAULT_CHAT_ENGINE)
        return hit.value if hit is not None else ""

    return lookup
