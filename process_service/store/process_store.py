"""process_service collections. Every hot operation addresses one document by _id, because the
embedded store only uses the _id index (see docs/architecture.md, "Store access")."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pymongo import UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError

from process_service.process_model import (
    ChatRecord,
    EngineState,
    InboxMessage,
    Process,
    SessionEvent,
)
from process_service.store.chat_cache import ChatCache
from process_service.store.documents import (
    chat_doc,
    chat_from_doc,
    engine_state_from_doc,
    event_doc,
    event_from_doc,
    message_from_doc,
    new_process_doc,
    process_from_doc,
)
from process_service.store.insert_combiner import GATHER_S, InsertCombiner
from process_service.store.transitions import ProcessTransitions
from vance.chat_ids import chat_message_id, parse_chat_message_id
from vance.domain import ProcessStatus

# Document: the store's side of every record (store_docs.py); this module and its two
# siblings are the only ones that handle them.
from vance.store import Document, is_duplicate_key, only_duplicates
from vance.store_wire import HotCommands

SNAPSHOT_CACHE = 2048
# Chat messages an assignment carries: as many as the longest history an engine reads by default
# (engine_worker/engines/arthur.py `historyLimit`).
RECENT_CHAT = 100
LIVE = [s.value for s in ProcessStatus if s is not ProcessStatus.CLOSED]


def event_id(session_id: str, seq: int) -> str:
    return f"{session_id}:{seq:012d}"


# Ids probed per read when looking for the last seq of a session (process_service/events/log.py
# raises the stream document's lower bound well within this distance).
_PROBE = 128
_NAME_CACHE = 20_000
# Ids per `$in` read of many documents (a lifecycle sweep asks for hundreds of sessions).
_IN_BATCH = 500
# A cancelled turn may have written chat messages past the committed count.
_CHAT_SLACK = 256


class ProcessStore(ProcessTransitions):
    """process_service's collections: the process documents (their transitions are
    store_transitions.py's), names, the drained inbox, chat messages, session events."""

    def __init__(
        self,
        db: AsyncDatabase[Document],
        hot: HotCommands | None = None,
        *,
        insert_gather_s: float = GATHER_S,
    ) -> None:
        """`hot` carries the commands every turn sends (vance/store_wire.py); without it they
        go through PyMongo like the rest. `insert_gather_s`: the chat and event inserts' group
        commit window (insert_combiner.py)."""
        hot = hot or HotCommands(db)
        self._hot_processes = hot.collection("processes")
        self._hot_chat = hot.collection("chat_messages")
        self._hot_events = hot.collection("session_events")
        self._hot_streams = hot.collection("session_streams")
        self.database = db
        self.processes = db["processes"]
        self.names = db["process_names"]
        self.session_index = db["session_processes"]
        self.inbox = db["inbox"]
        self.chat = db["chat_messages"]
        self.events = db["session_events"]
        self.streams = db["session_streams"]
        self.snapshots = db["process_snapshots"]
        # Recipe snapshots (free-form recipe JSON) by process.
        self._snapshots: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._names: OrderedDict[str, str] = OrderedDict()  # `<session>:<name>` -> process id
        self.chat_cache = ChatCache()
        # What else this replica holds per process, dropped with the rest (`forget`): the
        # inbox's engine names, the dispatcher's chat holders, the owners cache.
        self.forgetters: list[Callable[[list[Process]], None]] = []
        # Turns' chat and sessions' events written together while a write is in flight.
        self._chat_inserts = InsertCombiner(self._insert_chats_now, gather_s=insert_gather_s)
        self._event_inserts = InsertCombiner(self._insert_events_now, gather_s=insert_gather_s)

    # ---- processes ----

    async def insert_process(self, process: Process) -> None:
        """Raises the store's duplicate key error when the id exists (vance.store)."""
        await self.processes.insert_one(new_process_doc(process))

    async def get(self, process_id: str) -> Process | None:
        doc = await self.processes.find_one({"_id": process_id})
        return None if doc is None else process_from_doc(doc)

    async def get_many(self, ids: list[str]) -> list[Process]:
        out: list[Process] = []
        for i in range(0, len(ids), _IN_BATCH):
            found = await self.processes.find({"_id": {"$in": ids[i : i + _IN_BATCH]}}).to_list(
                None
            )
            out.extend(process_from_doc(d) for d in found)
        return out

    async def statuses(self, ids: list[str]) -> dict[str, ProcessStatus]:
        """The status of each process that exists, read with nothing else."""
        out: dict[str, ProcessStatus] = {}
        for i in range(0, len(ids), _IN_BATCH):
            chunk = ids[i : i + _IN_BATCH]
            async for doc in self.processes.find({"_id": {"$in": chunk}}, {"status": 1}):
                out[str(doc["_id"])] = ProcessStatus(doc["status"])
        return out

    async def tenant_of_session(self, session_id: str) -> str | None:
        """The tenant of some process of the session (None when it has none), read through
        the session's process index, both reads by `_id`: the embedded store indexes nothing
        else, so a filter on `session_id` read every process (at 800 sessions, a fifth of a
        second of store CPU for each session's first steer)."""
        ids = await self.session_process_ids(session_id)
        if not ids:
            return None
        doc = await self.processes.find_one({"_id": {"$in": ids[:_IN_BATCH]}}, {"tenant_id": 1})
        return None if doc is None else str(doc.get("tenant_id") or "")

    async def reserve_name(self, session_id: str, name: str, process_id: str) -> str | None:
        """Claims a name within the session; returns the owner when it was taken already."""
        try:
            await self.names.insert_one({"_id": f"{session_id}:{name}", "process_id": process_id})
            return None
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
        existing = await self.names.find_one({"_id": f"{session_id}:{name}"})
        return str(existing["process_id"]) if existing else None

    async def lookup_name(self, session_id: str, name: str) -> str | None:
        """A name, once given, always means the same process (names are never reassigned
        within a session), so found names are cached; clients steer `chat` by name."""
        key = f"{session_id}:{name}"
        cached = self._names.get(key)
        if cached is not None:
            self._names.move_to_end(key)
            return cached
        doc = await self.names.find_one({"_id": key})
        if doc is None:
            return None
        self._names[key] = found = str(doc["process_id"])
        if len(self._names) > _NAME_CACHE:
            self._names.popitem(last=False)
        return found

    async def index_in_session(self, session_id: str, process_id: str) -> None:
        await self.session_index.update_one(
            {"_id": session_id}, {"$addToSet": {"ids": process_id}}, upsert=True
        )

    async def engine_states(self, session_ids: list[str]) -> dict[str, list[EngineState]]:
        """Session -> its processes' status and message counts, read with nothing else (not
        as whole Process records: the roll-up asks for every session that moved each second,
        and building a record from the few fields cost more than reading them)."""
        index = await self.sessions_process_ids(session_ids)
        ids = [pid for found in index.values() for pid in found]
        fields = {"status": 1, "session_id": 1, "pending_keys": 1, "owned_keys": 1}
        out: dict[str, list[EngineState]] = {sid: [] for sid in session_ids}
        for i in range(0, len(ids), _IN_BATCH):
            chunk = ids[i : i + _IN_BATCH]
            for doc in await self.processes.find({"_id": {"$in": chunk}}, fields).to_list(None):
                state = engine_state_from_doc(doc)
                out.setdefault(state.session_id, []).append(state)
        return out

    async def session_process_ids(self, session_id: str) -> list[str]:
        doc = await self.session_index.find_one({"_id": session_id})
        return list(doc["ids"]) if doc else []

    async def sessions_process_ids(self, session_ids: list[str]) -> dict[str, list[str]]:
        """`session_process_ids` of many sessions, one read per _IN_BATCH of them."""
        out: dict[str, list[str]] = {sid: [] for sid in session_ids}
        for i in range(0, len(session_ids), _IN_BATCH):
            chunk = session_ids[i : i + _IN_BATCH]
            for doc in await self.session_index.find({"_id": {"$in": chunk}}).to_list(None):
                out[str(doc["_id"])] = list(doc.get("ids") or [])
        return out

    async def renew_leases(self, lanes: list[tuple[str, str, int]], until_ms: int) -> set[str]:
        """Sets the lease end of each (process, turn, attempt) whose lane it still is, in one
        command; returns the turn ids renewed. Only when some were not is the outcome read
        back (one read by _id) to tell which."""
        ops = [
            UpdateOne(
                {"_id": pid, "lane.turn_id": turn_id, "lane.attempt": attempt},
                {"$set": {"lane.lease_until_ms": until_ms}},
            )
            for pid, turn_id, attempt in lanes
        ]
        result = await self.processes.bulk_write(ops, ordered=False)
        if result.matched_count == len(lanes):
            return {turn_id for _, turn_id, _ in lanes}
        held = {
            (p.id, p.lane.turn_id)
            for p in await self.get_many([pid for pid, _, _ in lanes])
            if p.lane is not None and p.lane.lease_until_ms == until_ms
        }
        return {turn_id for pid, turn_id, _ in lanes if (pid, turn_id) in held}

    async def recently_changed_sessions(self, since_ms: int) -> list[str]:
        """The sessions of processes written since `since_ms` (a scan: once at start,
        process_service/lifecycle/rollup_notify.py)."""
        docs = await self.processes.find(
            {"updated_at_ms": {"$gte": since_ms}}, {"session_id": 1}
        ).to_list(None)
        return sorted({str(d["session_id"]) for d in docs if d.get("session_id")})

    async def all_live(self) -> list[Process]:
        """Every process that is not CLOSED, without its messages. A full scan: only used by
        the recovery sweep."""
        projection = {"pending": 0, "owned": 0, "recipe_snapshot": 0}
        docs = await self.processes.find({"status": {"$in": LIVE}}, projection).to_list(None)
        return [process_from_doc(d) for d in docs]

    # ---- snapshots ----

    # A recipe snapshot is free-form recipe JSON.
    async def put_snapshot(self, process_id: str, snapshot: dict[str, Any]) -> None:
        await self.snapshots.replace_one(
            {"_id": process_id}, {"_id": process_id, "snapshot": snapshot}, upsert=True
        )
        self._remember(process_id, snapshot)

    async def snapshot(self, process_id: str) -> dict[str, Any]:  # JSON, as put
        """The recipe snapshot copied at spawn. Never changes, so a bounded cache holds the
        recently used ones and a turn costs no read for it."""
        cached = self._snapshots.get(process_id)
        if cached is not None:
            self._snapshots.move_to_end(process_id)
            return cached
        doc = await self.snapshots.find_one({"_id": process_id})
        snapshot = dict(doc["snapshot"]) if doc else {}
        self._remember(process_id, snapshot)
        return snapshot

    def _remember(self, process_id: str, snapshot: dict[str, Any]) -> None:  # JSON
        self._snapshots[process_id] = snapshot
        self._snapshots.move_to_end(process_id)
        while len(self._snapshots) > SNAPSHOT_CACHE:
            self._snapshots.popitem(last=False)

    # ---- inbox ----

    async def push_pending(
        self, process_id: str, msg: InboxMessage, *, session_id: str = ""
    ) -> Process | None:
        """Appends a message to the pending list unless the process is closed, belongs to
        another session than `session_id` (when given) or already holds a message with this
        key. Returns the process after the push, or None."""
        key = msg.key
        cond: Document = {
            "status": {"$ne": ProcessStatus.CLOSED.value},
            "pending_keys": {"$ne": key},
            "owned_keys": {"$ne": key},
            "drained_keys": {"$ne": key},  # drained by the last turn (Lanes.commit)
        }
        if session_id:
            cond["session_id"] = session_id
        return await self._cas(
            process_id,
            cond,
            {"$push": {"pending": msg.body, "pending_keys": key}, "$set": {"wake": True}},
        )

    async def archived(self, process_id: str, key: str) -> InboxMessage | None:
        doc = await self.inbox.find_one({"_id": f"{process_id}:{key}"})
        return None if doc is None else message_from_doc(doc)

    async def archive(
        self, process_id: str, msgs: list[InboxMessage], *, turn_id: str, now_ms: int
    ) -> None:
        """Records drained messages (idempotent: a redone commit writes the same ids)."""
        if not msgs:
            return
        docs = [
            {
                **m.body,
                "_id": f"{process_id}:{m.key}",
                "drained_at_ms": now_ms,
                "drained_by_turn": turn_id,
            }
            for m in msgs
        ]
        try:
            await self.inbox.insert_many(docs, ordered=False)
        except Exception as exc:
            if not is_duplicate_key(exc) and "duplicate" not in str(exc).lower():
                raise

    # ---- chat ----

    async def insert_chats(self, records: list[ChatRecord]) -> int:
        """Inserts chat messages in order, in one command with other turns' (insert_combiner.py);
        returns how many went in before one whose id exists (a redone turn), all of them when
        none did."""
        if not records:
            return 0
        inserted = await self._chat_inserts.insert([chat_doc(r) for r in records])
        for record in records[:inserted]:
            pid, n = parse_chat_message_id(record.id)
            self.chat_cache.put(pid, n, record)
        return inserted

    async def _insert_chats_now(self, docs: list[Document]) -> int:
        try:
            await self._hot_chat.insert_many(docs, ordered=True)
            inserted = len(docs)
        except BulkWriteError as exc:
            if not only_duplicates(exc):
                raise
            inserted = int(exc.details.get("nInserted", 0))
        return inserted

    async def get_chat(self, message_id: str) -> ChatRecord | None:
        doc = await self.chat.find_one({"_id": message_id})
        return None if doc is None else chat_from_doc(doc)

    async def chat_range(self, process_id: str, first: int, last: int) -> list[ChatRecord]:
        """Messages numbered first..last that exist: from memory where held (chat_cache.py),
        the rest from the store."""
        numbers = range(first, last + 1)
        held = self.chat_cache.get(process_id, numbers)
        ids = [chat_message_id(process_id, n) for n in numbers if n not in held]
        out: list[ChatRecord] = list(held.values())
        for i in range(0, len(ids), 500):
            found = await self.chat.find({"_id": {"$in": ids[i : i + 500]}}).to_list(None)
            for doc in found:
                record = chat_from_doc(doc)
                self.chat_cache.put(process_id, parse_chat_message_id(record.id)[1], record)
                out.append(record)
        out.sort(key=lambda m: m.id)
        return out

    async def copy_chat(self, records: list[ChatRecord]) -> None:
        """Inserts copies of chat messages (a respawned chat's history); ids that exist (a
        retried copy) are left as they are."""
        for i in range(0, len(records), _IN_BATCH):
            try:
                await self.chat.insert_many(
                    [chat_doc(r) for r in records[i : i + _IN_BATCH]], ordered=False
                )
            except Exception as exc:
                if not is_duplicate_key(exc) and "duplicate" not in str(exc).lower():
                    raise

    def recent_chat(self, process_id: str, last: int) -> list[ChatRecord]:
        """Messages numbered last-RECENT_CHAT+1..last (from 1 when fewer), oldest first, when
        memory holds every one of them; else none (a gap, or nothing cached: the engine reads
        its history with ListChatMessages instead)."""
        numbers = range(max(1, last - RECENT_CHAT + 1), last + 1)
        held = self.chat_cache.get(process_id, numbers)
        if len(held) != len(numbers):
            return []
        return [held[n] for n in numbers]

    def forget(self, processes: list[Process]) -> None:
        """Drops what memory holds of these processes (suspended, closed or deleted): chat
        copies, recipe snapshots and their names."""
        self.chat_cache.forget([p.id for p in processes])
        for p in processes:
            self._snapshots.pop(p.id, None)
            self._names.pop(f"{p.session_id}:{p.name}", None)
        for forget in self.forgetters:
            forget(processes)

    # ---- a session's deletion (process_service/lifecycle/session_teardown.py) ----

    async def delete_session(self, session_id: str, processes: list[Process]) -> dict[str, int]:
        """Removes processes, names, chat messages, drained inbox messages, events and the
        stream counter of a session. Everything but the inbox goes by `_id`; the inbox is keyed
        by idempotency keys nobody keeps, so it is found by a filter (a scan, once per delete)."""
        pids = [p.id for p in processes]
        counts = {"processes": 0, "chat_messages": 0, "events": 0, "inbox": 0}
        for p in processes:
            last = p.chat_count + _CHAT_SLACK
            ids = [chat_message_id(p.id, n) for n in range(1, last + 1)]
            counts["chat_messages"] += await _delete_ids(self.chat, ids)
            await self.names.delete_one({"_id": f"{session_id}:{p.name}"})
        if pids:
            result = await self.inbox.delete_many({"target_process_id": {"$in": pids}})
            counts["inbox"] = result.deleted_count
        seq = await self.last_seq(session_id)
        events = [event_id(session_id, s) for s in range(1, seq + 1)]
        counts["events"] = await _delete_ids(self.events, events)
        await self.streams.delete_one({"_id": session_id})
        counts["processes"] = await _delete_ids(self.processes, pids)
        # Recipe snapshots live in their own collection, keyed by process id.
        await _delete_ids(self.snapshots, pids)
        await self.session_index.delete_one({"_id": session_id})
        return counts

    # ---- session events ----

    async def last_seq(self, session_id: str) -> int:
        """The highest seq taken for the session: written, or claimed ahead in the stream
        document by a sole writer (events/log.py). The document holds a lower bound (log.py
        raises it every MARK_EVERY seqs, or a block ahead); the ids past it are probed a
        window at a time until a window holds none."""
        doc = await self.streams.find_one({"_id": session_id})
        last = int(doc["seq"]) if doc else 0
        while True:
            window = [event_id(session_id, s) for s in range(last + 1, last + 1 + _PROBE)]
            found = await self.events.find({"_id": {"$in": window}}, {"seq": 1}).to_list(None)
            if not found:
                return last
            last = max(int(d["seq"]) for d in found)

    async def mark_seq(self, session_id: str, seq: int) -> None:
        await self._hot_streams.update_one({"_id": session_id}, {"$max": {"seq": seq}}, upsert=True)

    async def insert_events(self, events: list[SessionEvent], *, chunk_text: bool) -> int:
        """Inserts in order, in one command with other sessions' (insert_combiner.py); returns
        how many went in before an id that exists already (all of them when none did). Other
        errors raise. A stream chunk's text is stored only with `chunk_text`."""
        return await self._event_inserts.insert(
            [
                event_doc(event_id(e.session_id, e.seq), e, with_data=chunk_text or not e.ephemeral)
                for e in events
            ]
        )

    async def _insert_events_now(self, docs: list[Document]) -> int:
        try:
            await self._hot_events.insert_many(docs, ordered=True)
        except BulkWriteError as exc:
            if only_duplicates(exc):
                return int(exc.details.get("nInserted", 0))
            raise
        return len(docs)

    async def has_event_since(
        self, session_id: str, since_ms: int, match: Callable[[SessionEvent], bool]
    ) -> bool:
        """Whether the session's stream holds an event that `match`es, looking from the newest
        seq back to the first one written before `since_ms`. A few windows for a recent event:
        a redone turn asks it of its own chat messages (runtime/turns.py). A window may hold
        nothing: seqs claimed ahead and never used (a restart's gap, events/log.py RESERVE),
        or only chunks, which are not stored; the search goes on below it."""
        last = await self.last_seq(session_id)
        while last > 0:
            first = max(1, last - _PROBE + 1)
            window = await self.events_range(session_id, first, last)
            if any(match(e) for e in window):
                return True
            if window and window[0].at_ms < since_ms:
                return False
            last = first - 1
        return False

    async def events_range(self, session_id: str, first: int, last: int) -> list[SessionEvent]:
        ids = [event_id(session_id, s) for s in range(first, last + 1)]
        out: list[SessionEvent] = []
        for i in range(0, len(ids), 500):
            found = await self.events.find({"_id": {"$in": ids[i : i + 500]}}).to_list(None)
            out.extend(event_from_doc(d) for d in found)
        out.sort(key=lambda e: e.seq)
        return out


async def _delete_ids(collection: AsyncCollection[Document], ids: list[str]) -> int:
    deleted = 0
    for i in range(0, len(ids), _IN_BATCH):
        result = await collection.delete_many({"_id": {"$in": ids[i : i + _IN_BATCH]}})
        deleted += int(result.deleted_count)
    return deleted
