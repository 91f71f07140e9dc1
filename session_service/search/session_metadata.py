"""Session metadata: normalisation, the user's patch, and the auto-suggested
title, icon and color, which only ever fill fields no user has set."""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

from session_service.access.actor import Actor, check_owner_or_admin
from session_service.domain.models import (
    AccentColor,
    Guard,
    MetadataFields,
    Session,
    SessionMetadata,
    SessionStatus,
)
from session_service.search.index_store import SearchStore
from session_service.search.tokens import tokens
from session_service.store.session_store import SessionStore
from vance.clock import Clock
from vance.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError

logger = logging.getLogger(__name__)

TITLE_MAX = 200
ICON_MAX = 8  # code points: enough for ZWJ sequences such as 👨‍💻 (3) or flags (2)
TAGS_MAX = 20
TAG_MAX = 50
# After normalisation: lowercase word characters (any script), digits and `. + # -` inside,
# e.g. `ml-ops`, `c++`, `node.js`, `café`. Spaces inside a tag become `-`.
TAG_PATTERN = re.compile(r"^\w[\w.+#-]*$")
SUGGESTABLE = ("title", "icon", "color")
# Every status but CLOSED: the metadata of a closed session is final.
_NOT_CLOSED = Guard(not_statuses=frozenset({SessionStatus.CLOSED}))


@dataclass(frozen=True)
class MetadataPatch:
    """A user's change; None leaves a field unchanged, "" clears title/icon/color, [] tags."""

    title: str | None = None
    icon: str | None = None
    color: str | None = None
    tags: list[str] | None = None
    pinned: bool | None = None


@dataclass(frozen=True)
class Suggestion:
    title: str | None = None
    icon: str | None = None
    color: AccentColor | None = None


def normalize_title(value: str) -> str | None:
    title = " ".join(value.split())
    if len(title) > TITLE_MAX:
        raise InvalidArgumentError(f"title is longer than {TITLE_MAX}", reason="title_too_long")
    return title or None


def is_emoji(value: str) -> bool:
    """Pictographs, optionally joined (ZWJ) or varied (VS16); no letters, digits or spaces."""
    return bool(value) and all(
        unicodedata.category(c) in ("So", "Sk", "Mn", "Cf", "Me")
        or "\U0001f1e6" <= c <= "\U0001f1ff"
        for c in value
    )


def normalize_icon(value: str) -> str | None:
    icon = value.strip()
    if not icon:
        return None
    if len(icon) > ICON_MAX or not is_emoji(icon):
        raise InvalidArgumentError(
            f"icon must be one emoji of at most {ICON_MAX} code points", reason="bad_icon"
        )
    return icon


def normalize_color(value: str) -> AccentColor | None:
    color = value.strip().lower()
    if not color:
        return None
    try:
        return AccentColor(color)
    except ValueError:
        raise InvalidArgumentError(
            f"color must be one of {', '.join(c.value for c in AccentColor)}", reason="bad_color"
        ) from None


def normalize_tags(values: list[str]) -> list[str]:
    """Lowercase, trimmed, inner spaces as `-`, empty ones dropped, deduplicated in order."""
    out: list[str] = []
    for raw in values:
        tag = "-".join(unicodedata.normalize("NFKC", raw).lower().split())
        if not tag or tag in out:
            continue
        if len(tag) > TAG_MAX:
            raise InvalidArgumentError(
                f"tag {tag[:20]!r}… is longer than {TAG_MAX}", reason="tag_too_long"
            )
        if not TAG_PATTERN.match(tag):
            raise InvalidArgumentError(
                f"tag {tag!r} must match {TAG_PATTERN.pattern}", reason="bad_tag"
            )
        out.append(tag)
    if len(out) > TAGS_MAX:
        raise InvalidArgumentError(f"at most {TAGS_MAX} tags", reason="too_many_tags")
    return out


def _normalized(patch: MetadataPatch) -> MetadataFields:
    """The patch as normalised values, only the fields it passes."""
    out: MetadataFields = {}
    if patch.title is not None:
        out["title"] = normalize_title(patch.title)
    if patch.icon is not None:
        out["icon"] = normalize_icon(patch.icon)
    if patch.color is not None:
        out["color"] = normalize_color(patch.color)
    if patch.tags is not None:
        out["tags"] = normalize_tags(patch.tags)
    if patch.pinned is not None:
        out["pinned"] = patch.pinned
    return out


class Metadata:
    def __init__(self, store: SessionStore, index: SearchStore, clock: Clock) -> None:
        self._store = store
        self._index = index
        self._clock = clock

    async def _load(self, tenant: str, session_id: str) -> Session:
        session = await self._store.session(session_id)
        if session is None or session.tenant_id != tenant:
            raise NotFoundError(f"no session {session_id!r}", reason="session_not_found")
        return session

    async def update(
        self, tenant: str, session_id: str, actor: Actor, patch: MetadataPatch
    ) -> Session:
        """Applies a user's patch. Idempotent: a patch that changes nothing
        writes nothing and leaves userTouchedAt alone."""
        session = await self._load(tenant, session_id)
        check_owner_or_admin(session, actor)
        if session.status is SessionStatus.CLOSED:
            raise FailedPreconditionError("the session is closed", reason="session_closed")
        values = _normalized(patch)
        current = session.metadata
        changed: MetadataFields = {}
        if "title" in values and values["title"] != current.title:
            changed["title"] = values["title"]
        if "icon" in values and values["icon"] != current.icon:
            changed["icon"] = values["icon"]
        if "color" in values and values["color"] != current.color:
            changed["color"] = values["color"]
        if "tags" in values and values["tags"] != current.tags:
            changed["tags"] = values["tags"]
        if "pinned" in values and values["pinned"] != current.pinned:
            changed["pinned"] = values["pinned"]
        if "title" in values and current.title_auto_generated:
            changed["title_auto_generated"] = False  # the user adopted or replaced the title
        claimed = [f for f in SUGGESTABLE if f in values and f not in current.user_fields]
        if not changed and not claimed:
            return session
        touched = (
            self._clock.now_ms()
            if changed and session.metadata.user_touched_at_ms is None
            else None
        )
        updated = await self._store.patch_metadata(
            session_id, _NOT_CLOSED, changed, touched_at_ms=touched, claimed=claimed
        )
        if updated is None:
            raise FailedPreconditionError("the session is closed", reason="session_closed")
        await self.reindex(session.metadata, updated)
        if "pinned" in changed and not {"title", "tags"} & changed.keys():
            await self._store.cards.put(updated, self._clock.now_ms())
        return updated

    async def apply_suggestion(
        self, session_id: str, s: Suggestion, *, known: Session | None = None
    ) -> Session | None:
        """Fills title, icon and color only where empty and never set by a user, in one
        compare-and-set on exactly those conditions: a user's concurrent patch
        makes it fail and the fields are decided again, so the user's value always wins.
        `known` (the session as the caller last read it) is tried first, without a read: the
        compare-and-set checks the same conditions in the store, so a stale copy only costs
        the read it saved. A suggestion with nothing in it reads and writes nothing."""
        if not (s.title or s.icon or s.color):
            return known
        for _ in range(5):
            before, known = known or await self._store.session(session_id), None
            if before is None or before.status is SessionStatus.CLOSED:
                return before
            md = before.metadata
            fill: MetadataFields = {}
            if (
                s.title
                and md.title is None
                and "title" not in md.user_fields
                and not md.title_auto_generated
            ):
                fill["title"] = s.title
            if s.icon and md.icon is None and "icon" not in md.user_fields:
                fill["icon"] = s.icon
            if s.color and md.color is None and "color" not in md.user_fields:
                fill["color"] = s.color
            if not fill:
                return before
            after = await self._store.fill_metadata(session_id, _NOT_CLOSED, fill)
            if after is not None:
                await self.reindex(before.metadata, after)
                return after
        return None

    async def reindex(self, old: SessionMetadata, session: Session) -> None:
        """Moves the session between the title and tag lists of the search index."""
        new = session.metadata
        old_title, new_title = set(tokens(old.title or "")), set(tokens(new.title or ""))
        old_words = {w for t in old.tags for w in tokens(t)}
        new_words = {w for t in new.tags for w in tokens(t)}
        await self._index.set_metadata_tokens(
            session.tenant_id,
            session.session_id,
            title=(new_title - old_title, old_title - new_title),
            tags=(new_words - old_words, old_words - new_words),
            exact_tags=(set(new.tags) - set(old.tags), set(old.tags) - set(new.tags)),
        )
        if old.title != new.title or old.tags != new.tags:
            # A new card line: a search reads the session document again instead of one it
            # held with the old title or tags (search/held.py).
            await self._store.cards.put(session, self._clock.now_ms())
