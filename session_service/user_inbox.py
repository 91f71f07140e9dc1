"""The user's inbox (Eddie hub): items a process hands to its user to read, or to answer, later.

Items are stored per user; an insert pushes `inbox-item-added` to the user's connected hub
sessions; an answer goes back to the process that asked as an INBOX_ANSWER message. An item
carries an idempotency key from its sender, so a redone turn adds it once.
"""

from __future__ import annotations

import logging

import grpc
from pymongo import ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase

from session_service.home import Home
from vance.clock import Clock
from vance.errors import InvalidArgumentError, NotFoundError
from vance.ids import new_id
from vance.internal.v1 import process_internal_pb2 as pipb
from vance.internal.v1 import process_internal_pb2_grpc
from vance.protoutil import dict_to_struct, to_value
from vance.store import Document, is_duplicate_key
from vance.v1 import common_pb2 as pb
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc
from vance.v1 import session_pb2 as spb

logger = logging.getLogger(__name__)

INBOX_ITEM_ADDED = "inbox-item-added"
_FIELDS = (
    "id",
    "tenant_id",
    "user_id",
    "title",
    "body",
    "source_process_id",
    "source_session_id",
    "created_at_ms",
    "read",
    "answered",
    "answer",
    "requires_answer",
    "idempotency_key",
)


def item_to_proto(doc: Document) -> spb.InboxItem:
    return spb.InboxItem(**{k: doc[k] for k in _FIELDS if doc.get(k) is not None})


def item_data(doc: Document) -> dict[str, object]:
    """The item as clients see it (frames and REST)."""
    return {
        "id": doc["id"],
        "title": doc.get("title", ""),
        "body": doc.get("body", ""),
        "sourceProcessId": doc.get("source_process_id") or None,
        "sourceSessionId": doc.get("source_session_id") or None,
        "createdAt": doc.get("created_at_ms", 0),
        "read": bool(doc.get("read")),
        "answered": bool(doc.get("answered")),
        "answer": doc.get("answer") or None,
        "requiresAnswer": bool(doc.get("requires_answer")),
    }


class UserInbox:
    def __init__(
        self,
        db: AsyncDatabase[Document],
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

    async def add(self, item: spb.InboxItem) -> Document:
        if not item.tenant_id or not item.user_id:
            raise InvalidArgumentError("tenant and user are required", reason="user_required")
        if not item.title.strip():
            raise InvalidArgumentError("title is required", reason="title_required")
        item_id = (
            f"inb-{item.tenant_id}:{item.user_id}:{item.idempotency_key}"
            if item.idempotency_key
            else new_id("inb")
        )
        doc: Document = {
            "_id": item_id,
            "id": item_id,
            "tenant_id": item.tenant_id,
            "user_id": item.user_id,
            "title": item.title.strip(),
            "body": item.body,
            "source_process_id": item.source_process_id,
            "source_session_id": item.source_session_id,
            "created_at_ms": self._clock.now_ms(),
            "read": False,
            "answered": False,
            "answer": "",
            "requires_answer": item.requires_answer,
            "idempotency_key": item.idempotency_key,
        }
        try:
            await self._items.insert_one(doc)
        except Exception as exc:
            if not is_duplicate_key(exc):
                raise
            existing = await self._items.find_one({"_id": item_id})
            return existing or doc
        await self._push(doc)
        return doc

    async def _push(self, doc: Document) -> None:
        """To the user's hub sessions that have a connection now; the item itself is durable,
        so a client that was away lists it later."""
        tenant, user = str(doc["tenant_id"]), str(doc["user_id"])
        sessions = await self._home.bound_hub_sessions(tenant, user)
        if not sessions:
            return
        try:
            await self._processes_internal.PublishNotice(
                pipb.PublishNoticeRequest(
                    session_ids=sessions,
                    notice=pb.Notice(type=INBOX_ITEM_ADDED, data=dict_to_struct(item_data(doc))),
                )
            )
        except grpc.aio.AioRpcError as exc:
            logger.warning("inbox push for %s failed: %s", user, exc.code().name)

    async def list(self, tenant: str, user: str, *, unread_only: bool) -> list[Document]:
        cond: Document = {"tenant_id": tenant, "user_id": user}
        if unread_only:
            cond["read"] = False
        docs = await self._items.find(cond).to_list(None)
        docs.sort(key=lambda d: int(d.get("created_at_ms", 0)), reverse=True)
        return docs

    async def get(self, ref: spb.InboxItemRef) -> Document:
        doc = await self._items.find_one({"_id": ref.item_id})
        # Another user's item is as unknown as a missing one.
        if doc is None or doc["tenant_id"] != ref.tenant_id or doc["user_id"] != ref.user_id:
            raise NotFoundError(f"no inbox item {ref.item_id!r}", reason="inbox_item_not_found")
        return doc

    async def mark(self, ref: spb.InboxItemRef, read: bool) -> Document:
        await self.get(ref)
        doc = await self._items.find_one_and_update(
            {"_id": ref.item_id}, {"$set": {"read": read}}, return_document=ReturnDocument.AFTER
        )
        if doc is None:
            raise NotFoundError(f"no inbox item {ref.item_id!r}", reason="inbox_item_not_found")
        return doc

    async def answer(self, ref: spb.InboxItemRef, answer: str) -> Document:
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
        if doc.get("source_process_id"):
            try:
                await self._processes.Steer(
                    ppb.SteerRequest(
                        target=ppb.ProcessRef(process_id=str(doc["source_process_id"])),
                        message=pb.SteerMessage(
                            idempotency_key=f"inbox-answer:{doc['id']}",
                            inbox_answer=pb.InboxAnswer(
                                inbox_item_id=str(doc["id"]), answer=to_value(answer)
                            ),
                        ),
                    )
                )
            except grpc.aio.AioRpcError as exc:
                logger.warning("inbox answer to %s failed: %s", doc["source_process_id"], exc)
        return doc
