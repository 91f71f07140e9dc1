"""Session lifecycle cascades over a session's processes (seed 002 §9, §11): suspend, resume,
close, hard delete, and the fresh chat process of a reactivated session.

session_service decides when; this module only moves engines. Every transition is one
compare-and-set on the process document, so a cascade that runs twice (a retry, two replicas)
changes nothing the second time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from process_service.lanes import Lanes
from process_service.memory_purge import delete_session_memory
from process_service.processes import Processes
from process_service.store import ProcessStore, event_id
from vance.chat_ids import chat_message_id
from vance.domain import CloseReason, LifecycleCall, ProcessStatus, ThinkProcess
from vance.store import Document

logger = logging.getLogger(__name__)

Kick = Callable[[str, str], None]
CancelTurn = Callable[[str], None]

_CAS_RETRIES = 8
# Sessions of one batched cascade (suspend_sessions, close_sessions) moved at once.
SESSIONS_AT_ONCE = 16
_BATCH = 500
# A cancelled turn may have written chat messages past the committed count.
_CHAT_SLACK = 256
_CLEAR_ALL = {
    "lane": "",
    "owned": "",
    "owned_keys": "",
    "pending": "",
    "pending_keys": "",
    "pause_requested": "",
    "call": "",
}


class SessionCascade:
    def __init__(
        self,
        store: ProcessStore,
        lanes: Lanes,
        processes: Processes,
        kick: Kick,
        cancel_turn: CancelTurn,
    ) -> None:
        self._store = store
        self._lanes = lanes
        self._processes = processes
        self._kick = kick
        self._cancel_turn = cancel_turn

    async def _docs(self, session_id: str, only: list[str]) -> list[Document]:
        ids = only or await self._store.session_process_ids(session_id)
        docs = await self._store.get_many(ids)
        return [d for d in docs if d.get("session_id") == session_id]

    async def _each_session(
        self, session_ids: list[str], fn: Callable[[str, list[Document]], Awaitable[int]]
    ) -> tuple[int, list[str]]:
        """Runs `fn` over the processes of many whole sessions (a lifecycle sweep's batch):
        their documents in two reads for all, then SESSIONS_AT_ONCE sessions at a time (each
        process is its own compare-and-set). Returns the sum of what `fn` counted and the
        sessions whose cascade failed (the others went on; the caller leaves those as they are,
        so a later sweep tries them again)."""
        index = await self._store.sessions_process_ids(list(dict.fromkeys(session_ids)))
        by_session: dict[str, list[Document]] = {sid: [] for sid in index}
        for doc in await self._store.get_many([p for ids in index.values() for p in ids]):
            sid = str(doc.get("session_id", ""))
            if sid in by_session:
                by_session[sid].append(doc)
        gate = asyncio.Semaphore(SESSIONS_AT_ONCE)
        total = 0
        failed: list[str] = []

        async def one(sid: str, docs: list[Document]) -> None:
            nonlocal total
            async with gate:
                try:
                    total += await fn(sid, docs)
                except Exception:
                    logger.exception("cascade of session %s failed", sid)
                    failed.append(sid)

        async with asyncio.TaskGroup() as tg:
            for sid, docs in by_session.items():
                tg.create_task(one(sid, docs))
        return total, failed

    # ---- suspend ----

    async def suspend(self, session_id: str, cause: str, only: list[str]) -> list[Document]:
        return await self._suspend_docs(
            session_id, await self._docs(session_id, only), cause, whole_session=not only
        )

    async def suspend_sessions(self, session_ids: list[str], cause: str) -> tuple[int, list[str]]:
        """`suspend` of every process of many sessions: how many processes are suspended, and
        the sessions whose cascade failed."""

        async def one(sid: str, docs: list[Document]) -> int:
            return len(await self._suspend_docs(sid, docs, cause, whole_session=True))

        return await self._each_session(session_ids, one)

    async def _suspend_docs(
        self, session_id: str, docs: list[Document], cause: str, *, whole_session: bool
    ) -> list[Document]:
        out = []
        for doc in docs:
            done = await self._suspend_one(doc, cause)
            if done is not None:
                out.append(done)
        # A suspended session lives only in the store: what memory holds of it goes.
        self._forget(session_id, out, whole_session=whole_session)
        return out

    async def _suspend_one(self, doc: Document, cause: str) -> Document | None:
        pid = str(doc["_id"])
        for _ in range(_CAS_RETRIES):
            status = ProcessStatus(doc["status"])
            if status in (ProcessStatus.CLOSED, ProcessStatus.SUSPENDED):
                return doc
            now = self._lanes.clock.now_ms()
            hook = self._lanes.hook_fields(doc, LifecycleCall.SUSPEND)
            fields = {
                "status": ProcessStatus.SUSPENDED.value,
                "last_suspend_cause": cause,
                "suspended_at_ms": now,
                "updated_at_ms": now,
                **hook,
            }
            lane = doc.get("lane") or {}
            if not lane:
                after = await self._store.update(
                    pid, {"lane": None, "status": status.value}, {"$set": fields}
                )
            else:
                # A turn runs: it is cut off, and what it owned goes back in front of pending so
                # the resume turn sees every message once (the commit of the cancelled turn is
                # refused because the lane is gone).
                pending_keys = doc.get("pending_keys")
                owned = list(doc.get("owned") or [])
                owned_keys = list(doc.get("owned_keys") or [])
                cond: Document = {
                    "lane.turn_id": lane.get("turn_id"),
                    "pending_keys": pending_keys
                    if pending_keys is not None
                    else {"$exists": False},
                }
                fields.update(
                    pending=owned + list(doc.get("pending") or []),
                    pending_keys=owned_keys + list(pending_keys or []),
                    wake=bool(owned_keys or pending_keys),
                )
                after = await self._store.update(
                    pid,
                    cond,
                    {
                        "$set": fields,
                        "$unset": {"lane": "", "owned": "", "owned_keys": "", "call": ""},
                    },
                )
                if after is not None and lane.get("turn_id"):
                    self._cancel_turn(str(lane["turn_id"]))
            if after is not None:
                await self._lanes.status_event(after, status, ProcessStatus.SUSPENDED)
                if hook:
                    self._kick(pid, str(after["engine"]))
                return after
            reread = await self._store.get(pid)
            if reread is None:
                return None
            doc = reread
        logger.warning("suspending %s lost every compare-and-set; left as is", pid)
        return None

    # ---- resume ----

    async def resume(self, session_id: str, only: list[str]) -> list[Document]:
        out = []
        for doc in await self._docs(session_id, only):
            if doc["status"] == ProcessStatus.SUSPENDED.value:
                resumed = await self._processes.resume(doc)
                await self._store.update(
                    str(doc["_id"]), {}, {"$unset": {"suspended_at_ms": ""}}, after=False
                )
                out.append(resumed)
        return out

    # ---- close ----

    async def close(self, session_id: str, reason: CloseReason, only: list[str]) -> list[Document]:
        return await self._close_docs(
            session_id, await self._docs(session_id, only), reason, whole_session=not only
        )

    async def close_sessions(
        self, session_ids: list[str], reason: CloseReason
    ) -> tuple[int, list[str]]:
        """`close` of every process of many sessions: how many processes it closed, and the
        sessions whose cascade failed."""

        async def one(sid: str, docs: list[Document]) -> int:
            return len(await self._close_docs(sid, docs, reason, whole_session=True))

        return await self._each_session(session_ids, one)

    async def _close_docs(
        self, session_id: str, docs: list[Document], reason: CloseReason, *, whole_session: bool
    ) -> list[Document]:
        """Engines off with the reason; pending queues are dropped (the chat history stays).
        Parents are not notified: they are in the same session and close with it."""
        out = []
        for doc in docs:
            if doc["status"] == ProcessStatus.CLOSED.value:
                continue
            now = self._lanes.clock.now_ms()
            hook = self._lanes.hook_fields(doc, LifecycleCall.STOP)
            before = await self._store.update(
                str(doc["_id"]),
                {"status": {"$ne": ProcessStatus.CLOSED.value}},
                {
                    "$set": {
                        "status": ProcessStatus.CLOSED.value,
                        "close_reason": reason.value,
                        "wake": False,
                        "updated_at_ms": now,
                        **hook,
                    },
                    "$unset": {**_CLEAR_ALL, **({} if hook else {"hook": ""})},
                },
                after=False,
            )
            if before is None:
                continue
            if hook:
                self._kick(str(doc["_id"]), str(before["engine"]))
            lane = before.get("lane") or {}
            if lane.get("turn_id"):
                self._cancel_turn(str(lane["turn_id"]))
            after = await self._store.get(str(doc["_id"]))
            if after is not None:
                await self._lanes.status_event(
                    after, ProcessStatus(before["status"]), ProcessStatus.CLOSED
                )
                out.append(after)
        self._forget(session_id, out, whole_session=whole_session)
        return out

    def _forget(self, session_id: str, docs: list[Document], *, whole_session: bool) -> None:
        self._store.forget(docs)
        if whole_session:
            self._lanes.events.forget(session_id)

    # ---- delete ----

    async def delete(self, session_id: str) -> dict[str, int]:
        """Removes processes, names, chat messages, drained inbox messages, events and the
        stream counter of a session. Everything but the inbox goes by `_id`; the inbox is keyed
        by idempotency keys nobody keeps, so it is found by a filter (a scan, once per delete)."""
        docs = await self._docs(session_id, [])
        pids = [str(d["_id"]) for d in docs]
        self._store.forget(docs)
        self._lanes.events.forget(session_id)
        counts = {"processes": 0, "chat_messages": 0, "events": 0, "inbox": 0}
        for doc in docs:
            last = int(doc.get("chat_count", 0)) + _CHAT_SLACK
            ids = [chat_message_id(str(doc["_id"]), n) for n in range(1, last + 1)]
            counts["chat_messages"] += await _delete_ids(self._store.chat, ids)
            await self._store.names.delete_one({"_id": f"{session_id}:{doc.get('name', '')}"})
        if pids:
            result = await self._store.inbox.delete_many({"target_process_id": {"$in": pids}})
            counts["inbox"] = result.deleted_count
        seq = await self._store.last_seq(session_id)
        events = [event_id(session_id, s) for s in range(1, seq + 1)]
        counts["events"] = await _delete_ids(self._store.events, events)
        await self._store.streams.delete_one({"_id": session_id})
        counts["processes"] = await _delete_ids(self._store.processes, pids)
        # Recipe snapshots live in their own collection, keyed by process id.
        await _delete_ids(self._store.processes.database["process_snapshots"], pids)
        await self._store.session_index.delete_one({"_id": session_id})
        memory = await delete_session_memory(self._store.processes.database, session_id, pids)
        logger.info(
            "deleted the process data of session %s: %s, memory records %d",
            session_id,
            counts,
            memory,
        )
        return counts

    # ---- reactivate ----

    async def respawn_chat(
        self, spec: ThinkProcess, *, idempotency_key: str, history_from: str
    ) -> ThinkProcess:
        """A fresh chat process whose chat begins with a copy of `history_from`'s chat, so the
        engine's own history (ListChatMessages) is the old conversation: a full replay, which
        the engine fits into its context budget like any long chat. Idempotent by key."""
        created = await self._processes.create(spec, idempotency_key=idempotency_key, start=False)
        doc = await self._store.get(created.id)
        if doc is None or doc.get("started") or doc.get("seeded_from") is not None:
            return created
        copied = await self._copy_chat(history_from, created.id, spec)
        seeded = await self._store.update(
            created.id,
            {"status": ProcessStatus.INIT.value, "seeded_from": {"$exists": False}},
            {"$set": {"chat_count": copied, "wake": True, "seeded_from": history_from}},
        )
        if seeded is not None:
            self._kick(created.id, spec.engine)
        return created

    async def _copy_chat(self, source: str, target: str, spec: ThinkProcess) -> int:
        old = await self._store.get(source)
        if old is None:
            return 0
        last = int(old.get("chat_count", 0))
        messages = await self._store.chat_range(source, 1, last)
        docs: list[Document] = []
        for n, m in enumerate(messages, start=1):
            meta: dict[str, Any] = {**(m.get("meta") or {}), "replayedFrom": m["_id"]}
            docs.append(
                {
                    **{k: v for k, v in m.items() if k not in ("_id", "meta", "turn_key")},
                    "_id": chat_message_id(target, n),
                    "turn_key": f"replay:{n}",
                    "think_process_id": target,
                    "process_name": spec.name,
                    "meta": meta,
                }
            )
        for i in range(0, len(docs), _BATCH):
            try:
                await self._store.chat.insert_many(docs[i : i + _BATCH], ordered=False)
            except Exception as exc:
                # A retried reactivate finds its own copies: the same ids, nothing twice.
                if "duplicate" not in str(exc).lower() and "E11000" not in str(exc):
                    raise
        return len(docs)


async def _delete_ids(collection: Any, ids: list[str]) -> int:
    deleted = 0
    for i in range(0, len(ids), _BATCH):
        result = await collection.delete_many({"_id": {"$in": ids[i : i + _BATCH]}})
        deleted += int(result.deleted_count)
    return deleted
