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
from dataclasses import replace

from process_service.knowledge.memory_purge import delete_session_memory
from process_service.lifecycle.processes import CancelTurn, NextTurnOf, Processes
from process_service.process_model import ChatRecord, Process
from process_service.runtime.lanes import Lanes
from process_service.store.process_store import ProcessStore
from vance.chat_ids import chat_message_id
from vance.domain import CloseReason, LifecycleCall, ProcessStatus, ThinkProcess

logger = logging.getLogger(__name__)

_CAS_RETRIES = 8
# Sessions of one batched cascade (suspend_sessions, close_sessions) moved at once.
SESSIONS_AT_ONCE = 16


class SessionCascade:
    def __init__(
        self,
        store: ProcessStore,
        lanes: Lanes,
        processes: Processes,
        next_turn: NextTurnOf,
        cancel_turn: CancelTurn,
    ) -> None:
        self._store = store
        self._lanes = lanes
        self._processes = processes
        self._next_turn = next_turn
        self._cancel_turn = cancel_turn

    async def _docs(self, session_id: str, only: list[str]) -> list[Process]:
        ids = only or await self._store.session_process_ids(session_id)
        return [p for p in await self._store.get_many(ids) if p.session_id == session_id]

    async def _each_session(
        self, session_ids: list[str], fn: Callable[[str, list[Process]], Awaitable[int]]
    ) -> tuple[int, list[str]]:
        """Runs `fn` over the processes of many whole sessions (a lifecycle sweep's batch):
        their documents in two reads for all, then SESSIONS_AT_ONCE sessions at a time (each
        process is its own compare-and-set). Returns the sum of what `fn` counted and the
        sessions whose cascade failed (the others went on; the caller leaves those as they are,
        so a later sweep tries them again)."""
        index = await self._store.sessions_process_ids(list(dict.fromkeys(session_ids)))
        by_session: dict[str, list[Process]] = {sid: [] for sid in index}
        for process in await self._store.get_many([p for ids in index.values() for p in ids]):
            if process.session_id in by_session:
                by_session[process.session_id].append(process)
        gate = asyncio.Semaphore(SESSIONS_AT_ONCE)
        total = 0
        failed: list[str] = []

        async def one(sid: str, docs: list[Process]) -> None:
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

    async def suspend(self, session_id: str, cause: str, only: list[str]) -> list[Process]:
        return await self._suspend_docs(
            session_id, await self._docs(session_id, only), cause, whole_session=not only
        )

    async def suspend_sessions(self, session_ids: list[str], cause: str) -> tuple[int, list[str]]:
        """`suspend` of every process of many sessions: how many processes are suspended, and
        the sessions whose cascade failed."""

        async def one(sid: str, docs: list[Process]) -> int:
            return len(await self._suspend_docs(sid, docs, cause, whole_session=True))

        return await self._each_session(session_ids, one)

    async def _suspend_docs(
        self, session_id: str, docs: list[Process], cause: str, *, whole_session: bool
    ) -> list[Process]:
        out = []
        for doc in docs:
            done = await self._suspend_one(doc, cause)
            if done is not None:
                out.append(done)
        # A suspended session lives only in the store: what memory holds of it goes.
        self._forget(session_id, out, whole_session=whole_session)
        return out

    async def _suspend_one(self, process: Process, cause: str) -> Process | None:
        pid = process.id
        for _ in range(_CAS_RETRIES):
            status = process.status
            if status in (ProcessStatus.CLOSED, ProcessStatus.SUSPENDED):
                return process
            now = self._lanes.clock.now_ms()
            hook = self._lanes.hook_for(process, LifecycleCall.SUSPEND)
            if process.lane is None:
                after = await self._store.suspend_waiting(
                    process, cause=cause, hook=hook, now_ms=now
                )
            else:
                # A turn runs: it is cut off (ProcessStore.suspend_running).
                after = await self._store.suspend_running(
                    process, cause=cause, hook=hook, now_ms=now
                )
                if after is not None:
                    self._cancel_turn(process.lane.turn_id)
            if after is not None:
                await self._lanes.status_event(after, status, ProcessStatus.SUSPENDED)
                self._next_turn(after)  # the SUSPEND hook, when one is asked for
                return after
            reread = await self._store.get(pid)
            if reread is None:
                return None
            process = reread
        logger.warning("suspending %s lost every compare-and-set; left as is", pid)
        return None

    # ---- resume ----

    async def resume(self, session_id: str, only: list[str]) -> list[Process]:
        out = []
        for process in await self._docs(session_id, only):
            if process.status is ProcessStatus.SUSPENDED:
                resumed = await self._processes.resume(process)
                await self._store.clear_suspended_at(process.id)
                out.append(resumed)
        return out

    # ---- close ----

    async def close(self, session_id: str, reason: CloseReason, only: list[str]) -> list[Process]:
        return await self._close_docs(
            session_id, await self._docs(session_id, only), reason, whole_session=not only
        )

    async def close_sessions(
        self, session_ids: list[str], reason: CloseReason
    ) -> tuple[int, list[str]]:
        """`close` of every process of many sessions: how many processes it closed, and the
        sessions whose cascade failed."""

        async def one(sid: str, docs: list[Process]) -> int:
            return len(await self._close_docs(sid, docs, reason, whole_session=True))

        return await self._each_session(session_ids, one)

    async def _close_docs(
        self, session_id: str, docs: list[Process], reason: CloseReason, *, whole_session: bool
    ) -> list[Process]:
        """Engines off with the reason; pending queues are dropped (the chat history stays).
        Parents are not notified: they are in the same session and close with it."""
        out = []
        for process in docs:
            if process.closed:
                continue
            hook = self._lanes.hook_for(process, LifecycleCall.STOP)
            before = await self._store.close_for_session(
                process.id, reason, hook=hook, now_ms=self._lanes.clock.now_ms()
            )
            if before is None:
                continue
            if before.lane is not None:
                self._cancel_turn(before.lane.turn_id)
            after = await self._store.get(process.id)
            if after is not None:
                self._next_turn(after)  # the STOP hook, when one is asked for
                await self._lanes.status_event(after, before.status, ProcessStatus.CLOSED)
                out.append(after)
        self._forget(session_id, out, whole_session=whole_session)
        return out

    def _forget(self, session_id: str, docs: list[Process], *, whole_session: bool) -> None:
        self._store.forget(docs)
        if whole_session:
            self._lanes.events.forget(session_id)

    # ---- delete ----

    async def delete(self, session_id: str) -> dict[str, int]:
        """Removes the session's process data (ProcessStore.delete_session)."""
        processes = await self._docs(session_id, [])
        self._store.forget(processes)
        self._lanes.events.forget(session_id)
        counts = await self._store.delete_session(session_id, processes)
        memory = await delete_session_memory(
            self._store.database, session_id, [p.id for p in processes]
        )
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
        process = await self._store.get(created.id)
        if process is None or process.started or process.seeded_from is not None:
            return created
        copied = await self._copy_chat(history_from, created.id, spec)
        seeded = await self._store.seed_chat(created.id, copied, history_from)
        if seeded is not None:
            self._next_turn(seeded)
        return created

    async def _copy_chat(self, source: str, target: str, spec: ThinkProcess) -> int:
        old = await self._store.get(source)
        if old is None:
            return 0
        messages = await self._store.chat_range(source, 1, old.chat_count)
        copies: list[ChatRecord] = [
            replace(
                m,
                id=chat_message_id(target, n),
                turn_key=f"replay:{n}",
                think_process_id=target,
                process_name=spec.name,
                meta={**m.meta, "replayedFrom": m.id},
            )
            for n, m in enumerate(messages, start=1)
        ]
        # A retried reactivate finds its own copies: the same ids, nothing twice.
        await self._store.copy_chat(copies)
        return len(copies)
