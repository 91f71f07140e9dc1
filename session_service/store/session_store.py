"""session_service's `users`, `projects`, `sessions` and `project_sessions` collections,
addressed by _id (tenant-scoped composite keys). The only module that knows their field names
and the update operators that change them: every other module reads and writes the typed
records of domain/models.py through the methods here."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from pymongo import ReturnDocument, UpdateOne

from session_service.domain.models import (
    DEAD,
    LIVE,
    Guard,
    MetadataFields,
    Project,
    Session,
    SessionFields,
    User,
)
from session_service.store.bind_drop_store import BindDropStore
from session_service.store.raw import Bson, Collection, Db
from session_service.store.session_cards import SessionCards
from vance.store import is_duplicate_key

# A session's lease stamp field (lifecycle/bind_leases.py).
LEASE_FIELD = "bind_lease_until_ms"
_IN_BATCH = 500
# What a bind check reads of a session: enough to tell who holds it, and its lease.
_HELD_FIELDS = {
    "status": 1,
    "bound_connection_id": 1,
    "allow_multiple_clients": 1,
    "participants": 1,
    LEASE_FIELD: 1,
}


@dataclass(frozen=True, slots=True)
class HeldState:
    """Who holds a session's bind, read without the rest of the document (binding.renew)."""

    status: str  # a SessionStatus value (StrEnum members compare and hash as their values)
    bound_connection_id: str | None
    allow_multiple_clients: bool
    participants: tuple[str, ...]
    lease_until_ms: int

    def held_by(self, connection_id: str) -> bool:
        """`_holds`, read off the state."""
        if self.status in DEAD:
            return False
        if self.bound_connection_id == connection_id:
            return True
        return self.allow_multiple_clients and connection_id in self.participants


@dataclass(frozen=True, slots=True)
class StoredUser:
    user: User
    password_hash: str


def _value(v: object) -> object:
    """A field value as stored: enums by their value, models as their JSON form."""
    if isinstance(v, Enum):
        return v.value
    return v


def _set(fields: Mapping[str, object], prefix: str = "") -> Bson:
    return {prefix + k: _value(v) for k, v in fields.items()}


def _update(fields: Mapping[str, object], prefix: str = "") -> Bson:
    """The update that writes `fields`: a field set to None is removed rather than stored as
    null, so a session document holds no null fields (`session_doc`)."""
    update: Bson = {}
    kept = {k: v for k, v in fields.items() if v is not None}
    if kept:
        update["$set"] = _set(kept, prefix)
    if len(kept) < len(fields):
        update["$unset"] = {prefix + k: "" for k, v in fields.items() if v is None}
    return update


def _empty(v: object) -> bool:
    """A value a session document leaves out: None, "", False, or an empty list or map (0 is
    kept: `last_activity_at_ms` is compared by range)."""
    return v is None or v is False or v == "" or v == [] or v == {}


def session_doc(session: Session) -> Bson:
    """The document a session is stored as: without the fields (top-level and in its
    metadata) at an empty value (`_empty`). The roll-up's status moves, the activity stamps and
    the lease renewals make the store parse and re-encode the whole document (in FerretDB, its
    JSON with a type schema per field) a few times per turn. A missing field reads back as its
    model default; `{field: None}`, `$nin` and `$ne` filters match it as they match null (no
    filter compares a field with "" or False); `$addToSet`, `$inc` and `$max` create it.
    Writes that set a field to None remove it (`_update`)."""
    doc: Bson = {k: v for k, v in session.model_dump(mode="json").items() if not _empty(v)}
    doc["metadata"] = {k: v for k, v in doc["metadata"].items() if not _empty(v)}
    return {"_id": session.session_id, **doc}


def _cond(session_id: str, guard: Guard) -> Bson:
    cond: Bson = {"_id": session_id}
    _guard_into(cond, guard)
    return cond


def _guard_into(cond: Bson, guard: Guard) -> None:
    if guard.statuses is not None:
        statuses = [s.value for s in guard.statuses]
        cond["status"] = statuses[0] if len(statuses) == 1 else {"$in": statuses}
    if guard.not_statuses is not None:
        cond["status"] = {"$nin": [s.value for s in guard.not_statuses]}
    if guard.bound_connection_id is not None:
        cond["bound_connection_id"] = guard.bound_connection_id
    if guard.transition_at_ms is not None:
        cond["transition_at_ms"] = guard.transition_at_ms
    if guard.generation is not None:
        cond["generation"] = guard.generation


def _holds(session_id: str, connection_id: str) -> Bson:
    """The session is live and the connection holds its bind or takes part in it."""
    cond = _cond(session_id, LIVE)
    cond["$or"] = [
        {"bound_connection_id": connection_id},
        {"allow_multiple_clients": True, "participants": connection_id},
    ]
    return cond


def _stamp(doc: Bson) -> int:
    return int(doc.get(LEASE_FIELD) or 0)


class SessionStore:
    def __init__(self, db: Db) -> None:
        self.users = db["users"]
        self.projects = db["projects"]
        self.sessions = db["sessions"]
        self.project_sessions = db["project_sessions"]
        self.cards = SessionCards(db)
        self.bind_drops = BindDropStore(db)  # the gateways' bind rounds (lifecycle/bind_drops.py)

    @staticmethod
    def _key(tenant: str, name: str) -> str:
        return f"{tenant}:{name}"

    # ---- users and projects ----

    async def insert_user(self, user: User, password_hash: str) -> bool:
        doc = {
            "_id": self._key(user.tenant_id, user.username),
            **user.model_dump(),
            "password_hash": password_hash,
        }
        return await self._insert(self.users, doc)

    async def user(self, tenant: str, username: str) -> StoredUser | None:
        doc = await self.users.find_one({"_id": self._key(tenant, username)})
        if doc is None:
            return None
        return StoredUser(User.model_validate(doc), str(doc.get("password_hash", "")))

    async def insert_project(self, project: Project) -> bool:
        doc = {
            "_id": self._key(project.tenant_id, project.project_id),
            **project.model_dump(mode="json"),
        }
        return await self._insert(self.projects, doc)

    async def project(self, tenant: str, project_id: str) -> Project | None:
        doc = await self.projects.find_one({"_id": self._key(tenant, project_id)})
        return Project.model_validate(doc) if doc else None

    # ---- sessions: reading ----

    async def insert_session(self, session: Session) -> None:
        await self.sessions.insert_one(session_doc(session))
        await self.project_sessions.update_one(
            {"_id": self._key(session.tenant_id, session.project_id)},
            {"$addToSet": {"ids": session.session_id}},
            upsert=True,
        )
        # The owner's card of the session: listing and search read cards, not sessions.
        await self.cards.put(session, session.created_at_ms)

    async def session(self, session_id: str) -> Session | None:
        doc = await self.sessions.find_one({"_id": session_id})
        return Session.model_validate(doc) if doc else None

    async def project_session_ids(self, tenant: str, project_id: str) -> list[str]:
        doc = await self.project_sessions.find_one({"_id": self._key(tenant, project_id)})
        return list(doc["ids"]) if doc else []

    async def sessions_by_ids(self, ids: Iterable[str]) -> list[Session]:
        """The sessions that exist among `ids`, read by `_id` in batches."""
        ids = list(ids)
        out: list[Session] = []
        for i in range(0, len(ids), _IN_BATCH):
            docs = await self.sessions.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}).to_list(None)
            out.extend(Session.model_validate(d) for d in docs)
        return out

    async def live_sessions(self) -> AsyncIterator[Session]:
        """Every session not CLOSED or ARCHIVED: a full scan (the sweep-set backfill only)."""
        async for doc in self.sessions.find(_guard_only(LIVE)):
            yield Session.model_validate(doc)

    async def live_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of `ids` whose session exists and is not CLOSED or ARCHIVED."""
        cond = _guard_only(LIVE)
        cond["_id"] = {"$in": list(ids)}
        return {str(d["_id"]) async for d in self.sessions.find(cond, {"_id": 1})}

    async def lease_stamps(self, ids: list[str]) -> list[tuple[str, int]]:
        """The bind lease stamps (lifecycle/bind_leases.py) of the sessions, as stored now:
        (session id, stamp)."""
        out: list[tuple[str, int]] = []
        for i in range(0, len(ids), _IN_BATCH):
            found = self.sessions.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}, {LEASE_FIELD: 1})
            out.extend((str(d["_id"]), _stamp(d)) for d in await found.to_list(None))
        return out

    async def carrying(self, ids: list[str], marks: SessionFields) -> list[tuple[str, int]]:
        """Those of the sessions that carry every one of `marks` now, with their lease
        stamps: which of a batch's compare-and-sets held (lifecycle/batch_transitions.py)."""
        want = _set(marks)
        out: list[tuple[str, int]] = []
        for i in range(0, len(ids), _IN_BATCH):
            found = self.sessions.find({"_id": {"$in": ids[i : i + _IN_BATCH]}})
            for d in await found.to_list(None):
                if all(d.get(k) == v for k, v in want.items()):
                    out.append((str(d["_id"]), _stamp(d)))
        return out

    # ---- sessions: writing ----

    async def cas(self, session_id: str, guard: Guard, fields: SessionFields) -> Session | None:
        """One compare-and-set on a session; the session as written, None when the guard
        did not hold."""
        doc = await self.sessions.find_one_and_update(
            _cond(session_id, guard), _update(fields), return_document=ReturnDocument.AFTER
        )
        return Session.model_validate(doc) if doc else None

    async def cas_many(self, ids: list[str], guard: Guard, fields: SessionFields) -> int:
        """The same compare-and-set on many sessions; how many matched."""
        matched = 0
        update = _update(fields)
        for i in range(0, len(ids), _IN_BATCH):
            cond = _guard_only(guard)
            cond["_id"] = {"$in": ids[i : i + _IN_BATCH]}
            result = await self.sessions.update_many(cond, update)
            matched += result.matched_count
        return matched

    async def move_statuses(self, moves: list[tuple[Session, SessionFields]]) -> int:
        """One compare-and-set per session on the status it was read with, in one bulk
        write; how many held."""
        result = await self.sessions.bulk_write(
            [
                UpdateOne({"_id": s.session_id, "status": s.status.value}, _update(f))
                for s, f in moves
            ],
            ordered=False,
        )
        return result.matched_count

    async def stamp_engine_activity(self, ids: list[str], now: int, guard: Guard) -> None:
        """Raises the engine activity of the sessions to `now` ($max: a batch that arrives
        late never moves it back)."""
        ops = []
        for sid in ids:
            cond = _cond(sid, guard)
            ops.append(UpdateOne(cond, {"$max": {"engine_activity_at_ms": now}}))
        await self.sessions.bulk_write(ops, ordered=False)

    async def unbind_stale(self, clear: Mapping[str, tuple[str, int]]) -> int:
        """Clears the binds in one update command, each on its own condition (holder and last
        frame as read): a bind that saw a frame (or a new holder) since keeps it. The `$in`
        lets the store fetch the sessions by `_id`; the `$or` holds the conditions. How many
        were cleared."""
        result = await self.sessions.update_many(
            {
                "_id": {"$in": list(clear)},
                "$or": [
                    {"_id": sid, "bound_connection_id": holder, "last_activity_at_ms": seen}
                    for sid, (holder, seen) in clear.items()
                ],
            },
            {"$unset": {"bound_connection_id": ""}},
        )
        return result.modified_count

    async def delete_session(self, session: Session) -> None:
        await self.project_sessions.update_one(
            {"_id": self._key(session.tenant_id, session.project_id)},
            {"$pull": {"ids": session.session_id}},
        )
        await self.sessions.delete_one({"_id": session.session_id})
        # Its bind drops: its binds were revoked before (the close), so no gateway replica
        # needs them, and a deleted session leaves nothing behind.
        await self.bind_drops.forget(session.session_id)

    # ---- metadata ----

    async def patch_metadata(
        self,
        session_id: str,
        guard: Guard,
        changed: MetadataFields,
        *,
        touched_at_ms: int | None,
        claimed: list[str],
    ) -> Session | None:
        """A user's metadata change: the changed fields, the first touch time, and the
        suggestable fields the user now owns (never suggested again)."""
        update = _update(changed, "metadata.")
        if touched_at_ms is not None:
            update.setdefault("$set", {})["metadata.user_touched_at_ms"] = touched_at_ms
        if not update:
            update["$set"] = {}
        if claimed:
            update["$addToSet"] = {"metadata.user_fields": {"$each": claimed}}
        doc = await self.sessions.find_one_and_update(
            _cond(session_id, guard), update, return_document=ReturnDocument.AFTER
        )
        return Session.model_validate(doc) if doc else None

    async def fill_metadata(
        self, session_id: str, guard: Guard, fill: MetadataFields
    ) -> Session | None:
        """Fills suggested fields only where they are still empty and no user ever set them;
        a title only where none was suggested before (then marked auto-generated)."""
        cond = _cond(session_id, guard)
        cond["metadata.user_fields"] = {"$nin": list(fill)}
        for k in fill:
            cond[f"metadata.{k}"] = None
        update = _set(fill, "metadata.")
        if "title" in fill:
            cond["metadata.title_auto_generated"] = {"$ne": True}  # False or left out
            update["metadata.title_auto_generated"] = True
        doc = await self.sessions.find_one_and_update(
            cond, {"$set": update}, return_document=ReturnDocument.AFTER
        )
        return Session.model_validate(doc) if doc else None

    async def mark_first_pairs(self, seen: Mapping[str, int]) -> None:
        """When each session's first question-and-answer pair was seen (session -> ms), in
        one bulk write; only the first time counts."""
        if not seen:
            return
        await self.sessions.bulk_write(
            [
                UpdateOne(
                    {"_id": session_id, "metadata.first_qa_at_ms": None},
                    {"$set": {"metadata.first_qa_at_ms": at_ms}},
                )
                for session_id, at_ms in seen.items()
            ],
            ordered=False,
        )

    async def count_suggestion(self, session_id: str, *, done: bool) -> None:
        """One more metadata suggestion attempt, and whether suggesting is over."""
        await self.sessions.update_one(
            {"_id": session_id},
            {"$set": {"metadata.suggest_done": done}, "$inc": {"metadata.suggest_attempts": 1}},
        )

    # ---- binds (lifecycle/connection_binding.py; the lease stamp is bind_leases.py's) ----

    async def try_bind(
        self, session_id: str, connection_id: str, now: int, *, stale_before: int | None
    ) -> Session | None:
        """The bind CAS: the session before the bind, None when refused. `stale_before`
        None takes any live session's bind; else only a free one, this connection's own, or
        one with no frame since then."""
        cond = _cond(session_id, LIVE)
        if stale_before is not None:
            cond["$or"] = [
                {"bound_connection_id": None},
                {"bound_connection_id": connection_id},
                {"last_activity_at_ms": {"$lt": stale_before}},
            ]
        before = await self.sessions.find_one_and_update(
            cond,
            {
                "$set": {"bound_connection_id": connection_id, "last_activity_at_ms": now},
                "$pull": {"participants": connection_id},
            },
            return_document=ReturnDocument.BEFORE,
        )
        return Session.model_validate(before) if before else None

    async def join(self, session_id: str, connection_id: str, now: int) -> Session | None:
        """A connection joins a live session as a participant."""
        doc = await self.sessions.find_one_and_update(
            _cond(session_id, LIVE),
            {
                "$addToSet": {"participants": connection_id},
                "$set": {"last_activity_at_ms": now},
            },
            return_document=ReturnDocument.AFTER,
        )
        return Session.model_validate(doc) if doc else None

    async def is_held(self, session_id: str, connection_id: str) -> bool:
        return (
            await self.sessions.find_one(_holds(session_id, connection_id), {"_id": 1}) is not None
        )

    async def touch(
        self, session_id: str, connection_id: str, now: int, *, lease_until: int | None
    ) -> bool:
        """A heartbeat's write: lastActivityAt and, given one, a lease stamp no lower than
        before; whether the connection still holds the session."""
        update: Bson = {"$set": {"last_activity_at_ms": now}}
        if lease_until is not None:
            update["$max"] = {LEASE_FIELD: lease_until}
        result = await self.sessions.update_one(_holds(session_id, connection_id), update)
        return result.matched_count > 0

    async def touch_many(self, beats: list[tuple[str, str, int]], now: int) -> int:
        """`touch` of many (session, connection, lease until) in one bulk write; how many
        matched."""
        ops = [
            UpdateOne(
                _holds(session_id, connection_id),
                {"$set": {"last_activity_at_ms": now}, "$max": {LEASE_FIELD: until}},
            )
            for session_id, connection_id, until in beats
        ]
        result = await self.sessions.bulk_write(ops, ordered=False)
        return result.matched_count

    async def held_states(self, ids: Iterable[str]) -> dict[str, HeldState]:
        docs = await self.sessions.find({"_id": {"$in": list(ids)}}, _HELD_FIELDS).to_list(None)
        return {
            str(d["_id"]): HeldState(
                status=str(d.get("status", "")),
                bound_connection_id=d.get("bound_connection_id"),
                allow_multiple_clients=bool(d.get("allow_multiple_clients")),
                participants=tuple(d.get("participants") or ()),
                lease_until_ms=_stamp(d),
            )
            for d in docs
        }

    async def leave(self, session_id: str, connection_id: str) -> None:
        """A participant leaves."""
        await self.sessions.update_one(
            {"_id": session_id}, {"$pull": {"participants": connection_id}}
        )

    async def hand_bind(self, session_id: str, holder: str, survivor: str) -> Session | None:
        """The bind moves from its holder to a participant (who stops being one), if the
        holder still holds it and the survivor still takes part."""
        doc = await self.sessions.find_one_and_update(
            {"_id": session_id, "bound_connection_id": holder, "participants": survivor},
            {"$set": {"bound_connection_id": survivor}, "$pull": {"participants": survivor}},
            return_document=ReturnDocument.AFTER,
        )
        return Session.model_validate(doc) if doc else None

    @staticmethod
    async def _insert(collection: Collection, doc: Bson) -> bool:
        try:
            await collection.insert_one(doc)
            return True
        except Exception as exc:
            if is_duplicate_key(exc):
                return False
            raise


def _guard_only(guard: Guard) -> Bson:
    cond: Bson = {}
    _guard_into(cond, guard)
    return cond


def fields_key(fields: SessionFields) -> str:
    """A key equal for equal field sets (lifecycle/batch_transitions.py groups writes by it)."""
    return json.dumps(_set(fields), sort_keys=True, default=str)
