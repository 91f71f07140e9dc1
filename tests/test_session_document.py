"""What a session's writes cost the store (issue 28): the session document leaves out fields
at an empty value and removes a field set to None instead of storing null, yet reads back
whole and still matches the filters that look for "not set"; and the engine activity stamp of
a RUNNING session is rewritten only once it is half its idle timeout old (an IDLE one's at
5 s, as before). Through the real store and the real services."""

from __future__ import annotations

from typing import Any

from tests.harness import System
from tests.lifecycle_support import get, now_ms, store, wait_status
from tests.test_session_activity import rewind
from tests.test_session_lifecycle_sweeps import new_session, ref
from vance.internal.v1 import session_internal_pb2 as sipb
from vance.v1 import session_pb2 as spb


def empty_values(doc: Any, path: str = "") -> list[str]:
    """The paths in `doc` whose value is null, "", False or an empty list or map."""
    out: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            at = f"{path}.{key}" if path else key
            if value is None or value is False or value in ("", [], {}):
                out.append(at)
            else:
                out.extend(empty_values(value, at))
    return out


async def stored(system: System, sid: str) -> dict[str, Any]:
    async with store(system) as db:
        doc: dict[str, Any] | None = await db["sessions"].find_one({"_id": sid})
    assert doc is not None
    return doc


async def test_a_session_document_holds_no_empty_fields_and_reads_back_whole(
    system: System,
) -> None:
    s = await new_session(system)
    created = await stored(system, s.session_id)
    assert empty_values(created) == []
    # Read back whole: the fields left out are their empty values.
    read = await get(system, s.session_id)
    assert read.bound_connection_id == "" and read.suspend_cause == 0
    assert read.suspended_at_ms == 0 and read.closed_at_ms == 0
    assert read.chat_process_id == s.chat_process_id and read.status == s.status
    # A bind and its release: the release sets the bind to None, which removes the field.
    conn = "conn_document"
    await system.sessions.BindSession(
        spb.BindSessionRequest(tenant_id="default", session_id=s.session_id, connection_id=conn)
    )
    assert (await stored(system, s.session_id))["bound_connection_id"] == conn
    await system.sessions.ReleaseBind(
        spb.ReleaseBindRequest(session_id=s.session_id, connection_id=conn)
    )
    released = await stored(system, s.session_id)
    assert "bound_connection_id" not in released
    assert empty_values(released) == []
    assert (await get(system, s.session_id)).bound_connection_id == ""
    # The store matches a left-out field as null, as the "not set yet" filters rely on
    # (SessionStore.fill_metadata, mark_first_pairs, try_bind).
    async with store(system) as db:
        for missing in ("bound_connection_id", "metadata.first_qa_at_ms", "metadata.icon"):
            found = await db["sessions"].find_one({"_id": s.session_id, missing: None})
            assert found is not None, missing
        assert await db["sessions"].find_one(
            {"_id": s.session_id, "metadata.user_fields": {"$nin": ["title"]}}
        )


async def note(system: System, sid: str) -> None:
    """An engine status report for the session, as process_service's rollup_notify sends it:
    answered once the roll-up and its stamps are written."""
    await system.sessions_internal.NoteEngineStatus(sipb.NoteEngineStatusRequest(session_ids=[sid]))


async def test_a_running_sessions_stamp_waits_for_half_its_idle_timeout(system: System) -> None:
    s = await new_session(system, idle_timeout_ms=60_000)
    await system.processes.Pause(ref(s))
    await wait_status(system, s.session_id, "RUNNING")  # a PAUSED engine counts as busy
    # 10 s old: an IDLE session's would be rewritten; a RUNNING one's is young enough.
    young = now_ms() - 10_000
    await rewind(system, s.session_id, young)
    await note(system, s.session_id)
    assert (await get(system, s.session_id)).engine_activity_at_ms == young
    # Half its idle timeout old: rewritten.
    old = now_ms() - 31_000
    await rewind(system, s.session_id, old)
    asked = now_ms()
    await note(system, s.session_id)
    assert (await get(system, s.session_id)).engine_activity_at_ms >= asked


async def test_an_idle_sessions_stamp_is_rewritten_at_5_s(system: System) -> None:
    s = await new_session(system, idle_timeout_ms=60_000)

    await wait_status(system, s.session_id, "IDLE")
    await rewind(system, s.session_id, now_ms() - 6_000)
    asked = now_ms()
    await note(system, s.session_id)
    assert (await get(system, s.session_id)).engine_activity_at_ms >= asked
