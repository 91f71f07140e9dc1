"""Tenant and project settings (the `vance.session.*` keys, docs/operations.md): stored per
level, read as layers (a project value overrides the tenant's), written by tenant admins only and
validated on write, so a
bad value is refused where it is typed rather than failing a later session-create.

`settings` collection: `_id` `<tenant>` (tenant level) or `<tenant>:<project>`, with
`values: [{key, value}]` (a list, because setting keys contain dots) and a version `v` that
every write compares and sets, so two admins editing different keys both keep their change.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from session_service.access.actor import Actor
from session_service.settings.engine_settings import ENGINE_KEYS
from session_service.settings.settings_docs import SettingsDocs
from session_service.store.raw import Db
from vance.domain import LIFECYCLE_SETTINGS, parse_lifecycle_setting
from vance.errors import (
    InvalidArgumentError,
    PermissionDeniedError,
)
from vance.mcp_servers import SETTING_MCP_SERVERS
from vance.mcp_servers import normalise as mcp_servers
from vance.work_settings import WORK_KEYS

logger = logging.getLogger(__name__)

SETTING_FORCED_FLOOR = "vance.session.forced-floor-ms"
# Upper bounds, so a stored value always fits the int64 proto fields it is passed on in.
MAX_MILLIS = 10 * 365 * 24 * 3600 * 1000  # ten years
MAX_COUNT = 1_000_000
SETTING_ABANDONED_ENABLED = "vance.session.abandoned-detection.enabled"
SETTING_ABANDONED_MIN_QA = "vance.session.abandoned-detection.min-qa-pairs"


def _lifecycle(key: str) -> Callable[[str], str]:
    def check(raw: str) -> str:
        if key.endswith("Ms"):
            return _millis(raw)
        return str(parse_lifecycle_setting(key, raw))  # an enum's value

    return check


def _whole(raw: str, low: int, high: int, what: str) -> str:
    text = raw.strip()
    # Length first: int() of thousands of digits is slow, then refused anyway.
    if not text.isdigit() or len(text) > len(str(high)) or not low <= int(text) <= high:
        raise ValueError(f"must be {what} from {low} to {high}")
    return str(int(text))


def _millis(raw: str) -> str:
    return _whole(raw, 0, MAX_MILLIS, "a whole number of milliseconds")


def _positive(raw: str) -> str:
    return _whole(raw, 1, MAX_COUNT, "a whole number")


def _boolean(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValueError("must be true or false")
    return value


def _language(raw: str) -> str:
    value = raw.strip().lower()
    if not re.fullmatch(r"[a-z]{2,3}(-[a-z0-9]{2,8})?", value):
        raise ValueError("must be a language code such as en, de or pt-br")
    return value


# Key -> normaliser (raises ValueError with what is allowed). The lifecycle keys are parsed as
# recipe_service's ResolveLifecycle parses them (vance/domain.py); the rest session_service reads.
KNOWN: dict[str, Callable[[str], str]] = {
    **{key: _lifecycle(key) for key in LIFECYCLE_SETTINGS},
    SETTING_FORCED_FLOOR: _millis,
    SETTING_ABANDONED_ENABLED: _boolean,
    SETTING_ABANDONED_MIN_QA: _positive,
    # The engine keys (session_service/settings/engine_settings.py) can be set per tenant and
    # project too.
    **ENGINE_KEYS,
    "chat.language": _language,  # Eddie's spoken language (process_service/hub/tools.py)
    # The user's own work: search, fetch, sandboxed exec (process_service/user_work/).
    **WORK_KEYS,
    SETTING_MCP_SERVERS: mcp_servers,  # MCP tool servers (tool_service/mcp_hub.py)
}
# The FORCED floor is a safety bound for the whole tenant: no project may lower it.
TENANT_ONLY = frozenset({SETTING_FORCED_FLOOR})


@dataclass(frozen=True)
class SettingsView:
    tenant_id: str
    project_id: str
    values: dict[str, str]  # set at this level
    effective: dict[str, str]  # the layers as a session of this level sees them


def validate(key: str, raw: str, *, project: bool) -> str:
    check = KNOWN.get(key)
    if check is None:
        raise InvalidArgumentError(
            f"unknown setting {key!r}; known: {', '.join(sorted(KNOWN))}",
            reason="unknown_setting",
        )
    if project and key in TENANT_ONLY:
        raise InvalidArgumentError(
            f"{key} is a tenant setting and cannot be set per project", reason="tenant_setting"
        )
    try:
        return check(raw)
    except ValueError as exc:
        raise InvalidArgumentError(
            f"setting {key}={raw!r} {exc}", reason="invalid_setting"
        ) from None


class Settings:
    def __init__(self, db: Db, docs: SettingsDocs | None = None) -> None:
        # The one read and write path of these documents, shared with the engine settings.
        # Reads come from its copies, kept until a write (here or, through the shared write
        # counter, on another replica within about a second; settings/settings_docs.py): the
        # services that ask for these settings (tool_service's MCP servers, process_service's
        # work and embedding settings) and every session create read them again and again,
        # and the documents change only when an admin writes.
        self._docs = docs or SettingsDocs(db["settings"])

    @staticmethod
    def _id(tenant: str, project: str) -> str:
        return f"{tenant}:{project}" if project else tenant

    async def effective(self, tenant: str, project: str = "") -> dict[str, str]:
        """The settings a session of this project sees: project values over tenant values."""
        return _layered(await self._docs.get_many(_layers(tenant, project)), tenant, project)

    async def view(self, tenant: str, project: str = "") -> SettingsView:
        docs = await self._docs.get_many(_layers(tenant, project))
        values = docs.get(self._id(tenant, project), {})
        return SettingsView(tenant, project, values, _layered(docs, tenant, project))

    async def update(
        self,
        tenant: str,
        project: str,
        actor: Actor,
        *,
        set_values: Mapping[str, str],
        unset: Iterable[str] = (),
        user_write: bool = False,
    ) -> SettingsView:
        """Sets and removes keys at one level; tenant admins (or the system) only, or the user
        on their own hub's user-level keys (`user_write`, session_service/settings/permissions.py).
        Idempotent."""
        if not actor.sees_all and not user_write:
            raise PermissionDeniedError("tenant admins only", reason="admin_required")
        clean = {k: validate(k, v, project=bool(project)) for k, v in set_values.items()}
        dropped = set(unset)
        for key in dropped:
            if key not in KNOWN:
                validate(key, "", project=bool(project))  # raises unknown_setting
        both = dropped & set(clean)
        if both:
            raise InvalidArgumentError(
                f"set and unset name the same key: {', '.join(sorted(both))}",
                reason="invalid_setting",
            )
        await self._docs.update(
            self._id(tenant, project),
            lambda stored: {k: v for k, v in (stored | clean).items() if k not in dropped},
        )
        return await self.view(tenant, project)


def _layers(tenant: str, project: str) -> list[str]:
    """The documents a project's settings are layered from, the lowest first."""
    return [tenant] + ([f"{tenant}:{project}"] if project else [])


def _layered(docs: dict[str, dict[str, str]], tenant: str, project: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in _layers(tenant, project):
        out |= _sane(docs.get(key, {}), key)
    return out


def _sane(values: dict[str, str], level: str) -> dict[str, str]:
    """Stored values that still pass today's checks. One stored before a check existed (or
    written around this class) is skipped with a warning, so the level below or the built-in
    default applies: a bad value must never make every session-create of a project fail."""
    out: dict[str, str] = {}
    for key, raw in values.items():
        try:
            out[key] = validate(key, raw, project=False)
        except InvalidArgumentError as exc:
            logger.warning("setting ignored at %s: %s", level, exc.message)
    return out
