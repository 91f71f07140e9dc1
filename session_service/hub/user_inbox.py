"""The user's inbox (Eddie hub): items a process hands to its user to read, or to answer, later.

Items are stored per user; an insert pushes `inbox-item-added` to the user's connected hub
sessions; an answer goes back to the process that asked as an INBOX_ANSWER message. An item
carries an idempotency key from its sender, so a redone turn adds it once.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

import grpc
from pymongo import ReturnDocument

from session_service.hub.home import Home
from session_service.store.raw import Bson, Db
from vance.clock import Clock
from vance.errors import InvalidArgumentError, NotFoundError
from vance.ids import new_id
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.protoutil import dict_to_struct, to_value
from vance.store import is_duplicate_key
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

INBOX_ITEM_ADDED = "inbox-item-added"


@dataclass(frozen=True, slots=True)
class InboxEntry:
    """One item of a user's inbox, as stored in `user_inbox` (`_id` is its id)."""

    id: str
    tenant_id: str
    user_id: str
    title: str = ""
    body: str = ""
    source_process_id: str = ""
    source_session_id: str = ""
    created_at_ms: int = 0
    read: bool = False
    answered: bool = False
    answer: str = ""
    requires_answer: bool = False
    idempotency_key: str = ""

    @staticmethod
    def from_doc(doc: Bson) -> InboxEntry:
        return InboxEntry(
            id=str(doc.get("id") or doc["_id"]),
            tenant_id=str(doc["tenant_id"]),
            user_id=str(doc["user_id"]),
            title=str(doc.get("title") or ""),
            body=str(doc.get("body") or ""),
            source_process_id=str(doc.get("source_process_id") or ""),
            source_session_id=str(doc.get("source_session_id") or ""),
            created_at_ms=int(doc.get("created_at_ms") or 0),
            read=bool(doc.get("read")),
            answered=bool(doc.get("answered")),
            answer=str(doc.get("answer") or ""),
            requires_answer=bool(doc.get("requires_answer")),
            idempotency_key=str(doc.get("idempotency_key") or ""),
        )

    def to_doc(self) -> Bson:
        return {"_id": self.id, **asdict(self)}


def item_to_proto(e: InboxEntry) -> spb.InboxItem:
    return spb.InboxItem(**asdict(e))


def item_data(e: InboxEntry) -> dict[str, object]:
    """The item as clients see it (frames and REST)."""
    return {
        "id": e.id,
        "title": e.title,
        "body": e.body,
        "sourceProcessId": e.source_process_id or None,
        "sourceSessionId": e.source_session_id or None,
        "createdAt": e.created_at_ms,
        "read": e.read,
        "answered": e.answered,
        "answer": e.answer or None,
        "requiresAnswer": e.requires_answer,
    }


class UserInbox:
    def __init__(
        self,
        db: Db,
        clock: Clock,
        home: Home,
        processes: process_pb2_grpc.ProcessServiceAsyncStub,
        processes_internal: process_internal_pb2_grpc.ProcessInternalServiceAsyncStub,
    ) -> None:
        self._items = db["user_inbox"]
        self._clock = clock
        self._home = home
        self._processes = processes
        self._processes_internal = processes_internal  # PublishNotice

    async def add(self, item: spb.InboxItem) -> InboxEntry:
        if not item.tenant_id or not item.user_id:
            raise InvalidArgumentError("tenant and user are required", reason="user_required")
        if not item.title.strip():
            raise InvalidArgumentError("title is required", reason="title_required")
        item_id = (
            f"inb-{item.tenant_id}:{item.user_id}:{item.idempotency_key}"
            if item.idempotency_key
            else new_id("inb")
        )
        entry = InboxEntry(
            id=item_id,
            tenant_id=item.tenant_id,
            user_id=item.user_id,
            title=item.title.strip(),
            body=item.body,
            source_process_id=item.source_process_id,
            source_session_id=item.source_session_id,
            created_at_ms=self._clock.now_ms(),
            requires_answer=item.requires_answer,
            idempotency_key=item.idempotency_key,
        )
        try:
            await self._items.insert_one(entry.to_doc())
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
            existing = await self._items.find_one({"_id": item_id})
            return InboxEntry.from_doc(existing) if existing else entry
        await self._push(entry)
        return entry

    async def _push(self, entry: InboxEntry) -> None:
        """To the user's hub sessions that have a connection now; the item itself is durable,
        so a client that was away lists it later."""
        tenant, user = entry.tenant_id, entry.user_id
        sessions = await self._home.bound_hub_sessions(tenant, user)
        if not sessions:
            return
        try:
            await self._processes_internal.PublishNotice(
                pipb.PublishNoticeRequest(
                    session_ids=sessions,
                    notice=pb.Notice(type=INBOX_ITEM_ADDED, data=dict_to_struct(item_data(entry))),
                )
            )
        except grpc.aio.AioRpcError as exc:
            logger.warning("inbox push for %s failed: %s", user, exc.code().name)

    async def list(self, tenant: str, user: str, *, unread_only: bool) -> list[InboxEntry]:
        cond: Bson = {"tenant_id": tenant, "user_id": user}
        if unread_only:
            cond["read"] = False
        entries = [InboxEntry.from_doc(d) for d in await self._items.find(cond).to_list(None)]
        entries.sort(key=lambda e: e.created_at_ms, reverse=True)
        return entries

    async def get(self, ref: spb.InboxItemRef) -> InboxEntry:
        doc = await self._items.find_one({"_id": ref.item_id})
        # Another user's item is as unknown as a missing one.
        if doc is None or doc["tenant_id"] != ref.tenant_id or doc["user_id"] != ref.user_id:
            raise NotFoundError(f"no inbox item {ref.item_id!r}", reason="inbox_item_not_found")
        return InboxEntry.from_doc(doc)

    async def mark(self, ref: spb.InboxItemRef, read: bool) -> InboxEntry:
        await self.get(ref)
        doc = await self._items.find_one_and_update(
            {"_id": ref.item_id}, {"$set": {"read": read}}, return_document=ReturnDocument.AFTER
        )
        if doc is None:
            raise NotFoundError(f"no inbox item {ref.item_id!r}", reason="inbox_item_not_found")
        return InboxEntry.from_doc(doc)

    async def answer(self, ref: spb.InboxItemRef, answer: str) -> InboxEntry:
        """Stores the answer and sends it to the asking process once (the steer's key is the
        item's, so answering twice delivers once and keeps the first answer)."""
        if not answer.strip():
            raise InvalidArgumentError("answer is required", reason="answer_required")
        current = await self.get(ref)
        doc = await self._items.find_one_and_update(
            {"_id": ref.item_id, "answered": False},
            {"$set": {"answered": True, "answer": answer, "read": True}},
            return_document=ReturnDocument.AFTER,
        )
        if doc is None:
            return current  # answered before: the first answer stands
        entry = InboxEntry.from_doc(doc)
        if entry.source_process_id:
            try:
                await self._processes.Steer(
                    ppb.SteerRequest(
                        target=ppb.ProcessRef(process_id=entry.source_process_id),
                        message=pb.SteerMessage(
                            idempotency_key=f"inbox-answer:{entry.id}",
                            inbox_answer=pb.InboxAnswer(
                                inbox_item_id=entry.id, answer=to_value(answer)
                            ),
                        ),
                    )
                )
            except grpc.aio.AioRpcError as exc:
                logger.warning("inbox answer to %s failed: %s", entry.source_process_id, exc)
        return entry
