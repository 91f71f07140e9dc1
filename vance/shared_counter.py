"""A write counter in the store that every replica follows, so each replica can keep what it
read until somebody changes it (issue 28: no cost per second in flight).

A writer bumps the counter after its writes; each replica reads it every FOLLOW_EVERY_S and,
when it moved, drops its copies. A copy may outlive the owner's short bound only while the
counter is being read (its last good read under TRUSTED_S ago, or a read still in flight that
began while that held, for up to LATE_S) and only if it was read after the first good read of
the current run of them: a change before that is in the count that read saw. Used by the
`settings` documents (session_service/settings/settings_docs.py) and the tool registry
(tool_service/registry.py).

A read that is late is not a read that failed. When the store is slow (800 clients at a hosted
model's pace), a read of the counter could take longer than TRUSTED_S; every copy then counted
as untrusted, every settings lookup read the store, and the store grew slower still. The read
in flight will see every write counted before it began, and a write through another replica
is seen as soon as it answers, so the copies stay trusted while it is out (bounded by LATE_S,
the settings' own short bound). A read that fails still ends the trust at once."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from vance.store import Document

logger = logging.getLogger(__name__)

FOLLOW_EVERY_S = 1.0
TRUSTED_S = 3.0  # how recent the last good read must be for copies to be kept longer
# How long a read still in flight keeps the trust (it began while the trust held): as long as
# the owners' short bound (settings_docs.CACHE_S), so a store that stops answering costs no
# more staleness than following nothing.
LATE_S = 10.0


class SharedCounter:
    def __init__(
        self, collection: AsyncCollection[Document], counter_id: str, *, late_s: float = LATE_S
    ) -> None:
        self._c = collection
        self._id = counter_id
        self._late_s = late_s
        self._seen: int | None = None
        self._followed_at = float("-inf")  # monotonic time of the last good read
        self._trusted_since = float("inf")  # the first good read after none or a failed one
        self._reading_since: float | None = None  # the read in flight began then

    @property
    def followed_at(self) -> float:
        """When (time.monotonic()) the counter was last read."""
        return self._followed_at

    def trusts(self, read_at: float, now: float) -> bool:
        """Whether a copy read at `read_at` may be kept past its owner's short bound."""
        if read_at < self._trusted_since:
            return False
        if now - self._followed_at < TRUSTED_S:
            return True
        # Late, not failed: a read in flight that began while the last good one was trusted.
        began = self._reading_since
        return (
            began is not None
            and began - self._followed_at < TRUSTED_S
            and now - began < self._late_s
        )

    async def bump(self) -> None:
        """Counts a write; call it after the writes, so whoever sees the new count reads them."""
        await self._c.update_one({"_id": self._id}, {"$inc": {"n": 1}}, upsert=True)

    async def follow(self, dropped: Callable[[], Awaitable[None]]) -> None:
        """Reads the counter every FOLLOW_EVERY_S for the replica's life; awaits `dropped`
        when another replica wrote, and when a read fails (a change may go unseen then: the
        owner's copies fall back to its short bound and its watchers drop theirs)."""
        while True:
            self._reading_since = time.monotonic()
            try:
                doc = await self._c.find_one({"_id": self._id})
            except PyMongoError as exc:
                logger.warning("reading the shared counter %r failed: %s", self._id, exc)
                self._followed_at = float("-inf")
                await dropped()
            else:
                count = int((doc or {}).get("n") or 0)
                if self._seen is None or self._followed_at == float("-inf"):
                    self._trusted_since = time.monotonic()
                if self._seen is not None and count != self._seen:
                    await dropped()
                self._seen = count
                self._followed_at = time.monotonic()
            finally:
                self._reading_since = None  # also when the follower is cancelled
            await asyncio.sleep(FOLLOW_EVERY_S)
