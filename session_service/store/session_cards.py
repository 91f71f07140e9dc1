"""Session cards: per owner, one small line per session with what listing and ranking need
(status, pinned, last activity, project), so a search or a list reads one document per owner
instead of one session document per candidate (a session document with its lifecycle fields
reads at 1-2 ms on the embedded store; a 10,000-line card document at ~20 ms).

Cards are hints: writers append a line stamped with the time (`$push`, no read), the newest
line of a session wins, and the page a caller gets back is always checked against the session
documents themselves (query.py), which also rewrites a card found stale. Writers: session
creation (store/session_store.py), title, tag and pin changes (search/session_metadata.py),
RUNNING/IDLE (lifecycle/engine_rollup.py), close
(lifecycle/transitions.py, lifecycle/batch_transitions.py), the search feed (activity), and the
lifecycle hooks (archive,
reactivate). A deleted session's lines are removed (its hook, and any search that meets a card
without a session). A line newer than a session document a replica holds makes its searches
read the document again (search/held.py). The compacted lines are stored zlib-compressed
(packed_lists.py).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

from pymongo import UpdateOne

from session_service.domain.models import Session, SessionStatus
from session_service.store.packed_lists import Appends, packed_text, text_fields, unset_plain
from session_service.store.raw import Bson, Db

ACTIVITY_SLACK_MS = 60_000


class Card(NamedTuple):
    """A NamedTuple: a list or search parses every card in scope, thousands per call."""

    session_id: str
    owner: str
    status: str
    pinned: bool
    last_activity_at_ms: int
    project_id: str
    stamp: int

    @classmethod
    def of(cls, s: Session, stamp: int, *, status: str = "") -> Card:
        return cls(
            session_id=s.session_id,
            owner=s.owner_user_id,
            status=status or s.status.value,
            pinned=s.metadata.pinned,
            last_activity_at_ms=s.last_activity_at_ms,
            project_id=s.project_id,
            stamp=stamp,
        )

    def line(self) -> str:
        return "\t".join(
            [
                self.session_id,
                self.status,
                "1" if self.pinned else "0",
                str(self.last_activity_at_ms),
                self.project_id,
                str(self.stamp),
            ]
        )

    @classmethod
    def parse(cls, owner: str, line: str) -> Card:
        sid, status, pinned, activity, project, stamp = line.split("\t")
        return cls(sid, owner, status, pinned == "1", int(activity), project, int(stamp))

    def matches(self, s: Session) -> bool:
        """Close enough to rank by: activity moves with every client frame
        (lifecycle/connection_binding.py), and
        a card is not rewritten for each of them."""
        return (
            self.status == s.status.value
            and self.pinned == s.metadata.pinned
            and abs(self.last_activity_at_ms - s.last_activity_at_ms) < ACTIVITY_SLACK_MS
        )


class SessionCards:
    def __init__(self, db: Db) -> None:
        self.cards = db["session_cards"]
        self.owners = db["session_card_owners"]
        self._appends = Appends()
        self._known_owners: set[tuple[str, str]] = set()  # listed in `owners` already
        self._tenant_owners: dict[str, frozenset[str]] = {}  # the owners list last read

    @staticmethod
    def _id(tenant: str, owner: str) -> str:
        return f"{tenant}:{owner}"

    async def put(self, session: Session, stamp: int, *, status: str = "") -> None:
        await self.put_many([(session, status)], stamp)

    async def put_many(self, sessions: Iterable[tuple[Session, str]], stamp: int) -> None:
        by_owner: dict[tuple[str, str], list[str]] = {}
        for s, status in sessions:
            line = Card.of(s, stamp, status=status).line()
            by_owner.setdefault((s.tenant_id, s.owner_user_id), []).append(line)
        if not by_owner:
            return
        await self.cards.bulk_write(
            [
                UpdateOne(
                    {"_id": self._id(t, o)},
                    {"$push": {"ca": {"$each": lines}}},
                    upsert=True,
                )
                for (t, o), lines in by_owner.items()
            ],
            ordered=False,
        )
        new_owners = [k for k in by_owner if k not in self._known_owners]
        if new_owners:
            await self.owners.bulk_write(
                [
                    UpdateOne({"_id": t}, {"$addToSet": {"o": o}}, upsert=True)
                    for t, o in new_owners
                ],
                ordered=False,
            )
            self._known_owners.update(new_owners)
        for doc_id in self._appends.due(self._id(t, o) for t, o in by_owner):
            await self._compact(doc_id)

    async def remove(self, tenant: str, owner: str, session_ids: set[str]) -> None:
        """Drops every line of these sessions (a hard delete, or a card whose session is
        gone): a compare-and-set on the version, retried when a compaction got there first."""
        for _ in range(8):
            doc = await self.cards.find_one({"_id": self._id(tenant, owner)})
            if doc is None:
                return
            moved = [line for line in doc.get("ca") or [] if line.split("\t", 1)[0] in session_ids]
            kept = [
                line
                for line in packed_text(doc, "c").splitlines()
                if line and line.split("\t", 1)[0] not in session_ids
            ]
            result = await self.cards.update_one(
                {"_id": doc["_id"], "cv": doc.get("cv")},
                {
                    "$set": {
                        **text_fields("c", "\n".join(kept)),
                        "cv": int(doc.get("cv") or 0) + 1,
                    },
                    "$pullAll": {"ca": moved},
                    **unset_plain("c"),
                },
            )
            if result.matched_count:
                return
        raise RuntimeError(f"session card {tenant}:{owner} kept changing during a removal")

    async def of_owner(self, tenant: str, owner: str) -> dict[str, Card]:
        doc = await self.cards.find_one({"_id": self._id(tenant, owner)})
        return _merge(owner, doc)

    async def of_tenant(self, tenant: str) -> dict[str, Card]:
        """Every owner's cards. The owners this replica last saw listed are read beside the
        list itself (one round trip instead of two); owners the list adds are read after it,
        and cards of owners no longer listed are left out, so the result is the list's."""
        seen = self._tenant_owners.get(tenant)
        if seen is None:
            listed = await self.owners.find_one({"_id": tenant})
            out = await self._of_owners(tenant, list((listed or {}).get("o", [])))
        else:
            listed, out = await asyncio.gather(
                self.owners.find_one({"_id": tenant}), self._of_owners(tenant, list(seen))
            )
        owners = frozenset((listed or {}).get("o", []))
        if seen is not None:
            if owners - seen:
                out |= await self._of_owners(tenant, sorted(owners - seen))
            if seen - owners:
                out = {sid: c for sid, c in out.items() if c.owner in owners}
        self._tenant_owners[tenant] = owners
        return out

    async def _of_owners(self, tenant: str, owners: list[str]) -> dict[str, Card]:
        ids = [self._id(tenant, o) for o in owners]
        out: dict[str, Card] = {}
        for i in range(0, len(ids), 500):
            for doc in await self.cards.find({"_id": {"$in": ids[i : i + 500]}}).to_list(None):
                out |= _merge(str(doc["_id"])[len(tenant) + 1 :], doc)
        return out

    async def _compact(self, doc_id: str) -> None:
        """Folds the appended lines into the string, newest per session; a compare-and-set on
        the version, so concurrent appends survive and a concurrent compaction wins."""
        doc = await self.cards.find_one({"_id": doc_id})
        if doc is None:
            return
        moved = list(doc.get("ca") or [])
        merged = _merge("", doc)
        text = "\n".join(c.line() for c in merged.values())
        await self.cards.update_one(
            {"_id": doc_id, "cv": doc.get("cv")},
            {
                "$set": {**text_fields("c", text), "cv": int(doc.get("cv") or 0) + 1},
                "$pullAll": {"ca": moved},
                **unset_plain("c"),
            },
        )


_PARSED: OrderedDict[tuple[str, str], dict[str, Card]] = OrderedDict()
_PARSED_HELD = 64


def _merge(owner: str, doc: Bson | None) -> dict[str, Card]:
    if not doc:
        return {}
    out = dict(_compacted(owner, packed_text(doc, "c")))
    _newest(owner, doc.get("ca") or [], out)
    return out


def _newest(owner: str, lines: Iterable[str], into: dict[str, Card]) -> None:
    """Parses card lines into `into`; of a session's lines, the newest stamp wins."""
    for line in lines:
        if not line:
            continue
        card = Card.parse(owner, line)
        seen = into.get(card.session_id)
        if seen is None or card.stamp >= seen.stamp:
            into[card.session_id] = card


def _compacted(owner: str, text: str) -> dict[str, Card]:
    """The cards of a compacted string, parsed once per distinct string: a list or search
    reads the same one again and again between compactions (thousands of lines for a tenant)."""
    key = (owner, text)
    held = _PARSED.get(key)
    if held is not None:
        _PARSED.move_to_end(key)
        return held
    out: dict[str, Card] = {}
    _newest(owner, text.splitlines(), out)
    _PARSED[key] = out
    while len(_PARSED) > _PARSED_HELD:
        _PARSED.popitem(last=False)
    return out


def visible_by_default(status: str, include_archived: bool) -> bool:
    return status in (
        SessionStatus.INIT.value,
        SessionStatus.RUNNING.value,
        SessionStatus.IDLE.value,
        SessionStatus.SUSPENDED.value,
    ) or (include_archived and status == SessionStatus.ARCHIVED.value)
