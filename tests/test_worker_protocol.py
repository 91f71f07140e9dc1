"""The two sides of the worker protocol agree (engine_worker/protocol.py and
process_service/runtime/worker_protocol.py, docs/architecture.md "The worker protocol"): what one side
sends, through the wire bytes, is what the other reads; and process_service's chat-held
bookkeeping (process_service/runtime/chat_held.py) names one holder per process.

Pure conversions and bookkeeping, so no system is started; the turn tests (for example
tests/test_chat_history_turns.py) run the same messages over a real stream."""

from __future__ import annotations

import tracemalloc

import pytest

from engine_worker import protocol as ew
from engine_worker.chat_held import ChatHeld
from process_service.models import TurnRef
from process_service.process_model import ChatRecord, Process
from process_service.runtime import worker_protocol as ps
from process_service.runtime.chat_held import HELD_MAX, ChatHolders, TurnChat
from process_service.store.documents import chat_from_doc, process_from_doc
from vance.chat_ids import chat_message_id, turn_message_id
from vance.domain import ChatMessage, ChatRole, CloseReason, LifecycleCall, ProcessStatus
from vance.internal.v1 import worker_pb2 as wkpb


def _to_server(msg: ew.ToServer) -> wkpb.WorkerMessage:
    return wkpb.WorkerMessage.FromString(ew.to_proto(msg).SerializeToString())


def _to_worker(msg: ps.ToWorker) -> ew.FromServer:
    wire = wkpb.DispatchMessage.FromString(ps.to_proto(msg).SerializeToString())
    return ew.from_proto(wire)


def _chat_doc(process_id: str, n: int, content: str) -> ChatRecord:
    return chat_from_doc(
        {
            "_id": chat_message_id(process_id, n),
            "session_id": "s1",
            "think_process_id": process_id,
            "process_name": "chat",
            "role": "ASSISTANT",
            "content": content,
            "meta": {"n": n},
            "created_at_ms": 1_000 + n,
        }
    )


def _ref(chat: TurnChat) -> TurnRef:
    process: Process = process_from_doc(
        {
            "_id": "p1",
            "session_id": "s1",
            "tenant_id": "t1",
            "name": "chat",
            "engine": "arthur",
            "status": "RUNNING",
            "params": {"historyLimit": 10},
        }
    )
    return TurnRef(
        turn_id="turn-1",
        attempt=2,
        process_id="p1",
        session_id="s1",
        process_name="chat",
        engine="arthur",
        parent_process_id="",
        worker_id="w1",
        call=LifecycleCall.STEER,
        prev_status=ProcessStatus.IDLE,
        chat_base=2,
        owned=[],
        lease_until_ms=5_000,
        process=process,
        chat=chat,
    )


def test_the_hello_names_engines_hooks_and_slots() -> None:
    sent = ew.Hello("w1", {"arthur": "1.2.0", "eddie": "1.0.0"}, {"eddie": ["PEER"]}, 8)
    hello = ps.hello_from_proto(_to_server(sent))
    assert (hello.worker_id, hello.engines, hello.hooks, hello.slots) == (
        "w1",
        {"arthur": "1.2.0", "eddie": "1.0.0"},
        {"eddie": ["PEER"]},
        8,
    )
    # This worker reads DispatchBatches; one of the older form says nothing and reads none.
    assert hello.reads_batch
    older = wkpb.WorkerMessage(hello=wkpb.WorkerHello(worker_id="w0", slots=8))
    assert not ps.hello_from_proto(older).reads_batch


def test_a_dispatch_batch_reads_as_its_messages_in_order() -> None:
    """What process_service queued for a worker at one write, framed around the messages'
    encodings (`batch_wire`): the worker reads each as if it had come alone; one goes as
    itself; a batch inside a batch does not read (it names no turn, so it is left out)."""
    recent = [_chat_doc("p1", 1, "x" * 70_000)]  # a length past one byte of varint
    sent: list[ps.ToWorker] = [
        ps.Ack("turn-0", True),
        ps.Assign(_ref(TurnChat(recent=recent))),
        ps.Cancel("turn-9"),
    ]
    wire = wkpb.DispatchMessage.FromString(ps.batch_wire([ps.to_wire(m) for m in sent]))
    assert wire.WhichOneof("kind") == "batch"
    read = [ew.from_proto(m) for m in ew.unbatched(wire)]
    assert [type(m) for m in read] == [ew.Ack, ew.Assignment, ew.Cancel]
    assignment = read[1]
    assert isinstance(assignment, ew.Assignment) and assignment.recent_chat is not None
    assert assignment.recent_chat[0].content == "x" * 70_000
    alone = wkpb.DispatchMessage.FromString(ps.batch_wire([ps.to_wire(sent[2])]))
    assert [ew.from_proto(m) for m in ew.unbatched(alone)] == [ew.Cancel("turn-9")]
    nested = ps.batch_wire([ps.to_wire(sent[0]), ps.to_wire(sent[2])])
    outer = wkpb.DispatchMessage.FromString(ps.batch_wire([nested, ps.to_wire(sent[2])]))
    inner, cancel = ew.unbatched(outer)
    with pytest.raises(ValueError):
        ew.from_proto(inner)
    assert ew.from_proto(cancel) == ew.Cancel("turn-9")


def test_a_commit_reads_with_its_reports_before_it() -> None:
    reports: list[ew.Report] = [
        ew.ChatAppend("turn-1", turn_message_id("turn-1", 1), ChatRole.USER, "hi", None),
        ew.Chunk("turn-1", ChatRole.ASSISTANT, "Hel"),
        ew.Progress("turn-1", "STATUS", {"phase": "DONE"}),
        ew.ChatAppend(
            "turn-1", turn_message_id("turn-1", 2), ChatRole.ASSISTANT, "Hello", {"a": 1}
        ),
    ]
    commit = ew.Commit(
        "turn-1",
        ProcessStatus.CLOSED,
        CloseReason.DONE,
        "detail",
        "the result",
        {"score": 3},
        "what came before",
        7,
        reports,
    )
    read = ps.from_proto(_to_server(commit))
    assert [type(r) for r in read] == [
        ps.ChatAppend,
        ps.Chunk,
        ps.Progress,
        ps.ChatAppend,
        ps.Commit,
    ]
    first, chunk, progress, second, end = read
    assert isinstance(first, ps.ChatAppend) and isinstance(second, ps.ChatAppend)
    assert (first.ordinal, first.role, first.content) == (1, ChatRole.USER, "hi")
    assert (second.ordinal, second.content, second.meta) == (2, "Hello", {"a": 1})
    assert isinstance(chunk, ps.Chunk) and chunk.text == "Hel"
    assert isinstance(progress, ps.Progress) and progress.payload == {"phase": "DONE"}
    assert isinstance(end, ps.Commit)
    assert (end.status, end.close_reason, end.close_detail) == (
        ProcessStatus.CLOSED,
        CloseReason.DONE,
        "detail",
    )
    assert (end.summary, end.payload) == ("the result", {"score": 3})
    assert end.history_summary == ("what came before", 7)


def test_a_commit_without_a_new_history_summary_leaves_it_alone() -> None:
    commit = ew.Commit("turn-1", ProcessStatus.IDLE, None, "", "", {}, None, 0)
    (end,) = ps.from_proto(_to_server(commit))
    assert isinstance(end, ps.Commit) and end.history_summary is None and end.close_reason is None


def test_a_failure_and_the_worker_messages_without_a_turn() -> None:
    (failure,) = ps.from_proto(_to_server(ew.Failure("turn-1", "ValueError: boom")))
    assert failure == ps.Failure("turn-1", "ValueError: boom")
    assert ps.from_proto(_to_server(ew.Heartbeat(["a", "b"]))) == [ps.Heartbeat(["a", "b"])]
    assert ps.from_proto(_to_server(ew.Draining())) == [ps.Draining()]
    assert ps.from_proto(_to_server(ew.Capacity(3, "event loop lag"))) == [
        ps.Capacity(3, "event loop lag")
    ]


def test_a_batch_reads_as_its_messages_of_many_turns_in_order() -> None:
    """What the worker's outbox held at one write (engine_worker/worker.py): the chunks of two
    turns whose windows ended together, a heartbeat and a commit, read as if sent one by one."""
    sent: list[ew.ToServer] = [
        ew.Chunk("turn-1", ChatRole.ASSISTANT, "Hel"),
        ew.Chunk("turn-2", ChatRole.ASSISTANT, "Bon"),
        ew.Heartbeat(["turn-1", "turn-2"]),
        ew.Commit(
            "turn-2",
            ProcessStatus.IDLE,
            None,
            "",
            "",
            {},
            None,
            0,
            [ew.Chunk("turn-2", ChatRole.ASSISTANT, "jour")],
        ),
    ]
    wire = wkpb.WorkerMessage.FromString(ew.batch_wire([ew.to_wire(m) for m in sent]))
    assert wire.WhichOneof("kind") == "batch"
    assert ps.from_proto(wire) == [
        ps.Chunk("turn-1", ChatRole.ASSISTANT, "Hel"),
        ps.Chunk("turn-2", ChatRole.ASSISTANT, "Bon"),
        ps.Heartbeat(["turn-1", "turn-2"]),
        ps.Chunk("turn-2", ChatRole.ASSISTANT, "jour"),
        ps.Commit("turn-2", ProcessStatus.IDLE),
    ]
    # One message goes as itself.
    alone = wkpb.WorkerMessage.FromString(ew.batch_wire([ew.to_wire(sent[0])]))
    assert alone.WhichOneof("kind") == "event"


def test_a_batch_of_long_messages_reads_whole() -> None:
    """A batch is framed by hand around its messages' encodings: lengths past one byte of
    varint (a long answer, a commit carrying it) read back as sent."""
    long_text = "x" * 70_000
    sent: list[ew.ToServer] = [
        ew.ChatAppend("turn-1", turn_message_id("turn-1", 1), ChatRole.USER, "y" * 200, {"k": "v"}),
        ew.Chunk("turn-1", ChatRole.ASSISTANT, long_text),
        ew.Commit(
            "turn-1",
            ProcessStatus.IDLE,
            None,
            "",
            "",
            {"answer": long_text},
            None,
            0,
            [
                ew.ChatAppend(
                    "turn-1", turn_message_id("turn-1", 2), ChatRole.ASSISTANT, long_text, None
                )
            ],
        ),
    ]
    wire = wkpb.WorkerMessage.FromString(ew.batch_wire([ew.to_wire(m) for m in sent]))
    assert [m.SerializeToString() for m in wire.batch.messages] == [ew.to_wire(m) for m in sent]
    assert ps.from_proto(wire) == [
        ps.ChatAppend("turn-1", 1, ChatRole.USER, "y" * 200, {"k": "v"}),
        ps.Chunk("turn-1", ChatRole.ASSISTANT, long_text),
        ps.ChatAppend("turn-1", 2, ChatRole.ASSISTANT, long_text, {}),
        ps.Commit("turn-1", ProcessStatus.IDLE, payload={"answer": long_text}),
    ]


def test_a_batch_holds_no_hello_and_no_batch() -> None:
    """Such a message is left out (it names no turn); the rest of the batch reads."""
    hello = ew.to_wire(ew.Hello("w1", {"arthur": "1"}, {}, 8))
    chunk = ew.to_wire(ew.Chunk("turn-1", ChatRole.ASSISTANT, "Hel"))
    for inner, kind in ((hello, "hello"), (ew.batch_wire([chunk, chunk]), "batch")):
        batch = wkpb.WorkerMessage.FromString(ew.batch_wire([chunk, inner]))
        assert ps.from_proto(batch) == [
            ps.Chunk("turn-1", ChatRole.ASSISTANT, "Hel"),
            ps.Unreadable("", f"a batch holds no {kind}"),
        ]


def test_a_report_that_does_not_read_fails_its_own_turn_only() -> None:
    """A chat message without a role (or with a bad id) reads as `Unreadable` for its turn
    (process_service fails that turn and cancels it on the worker); the batch's other turns'
    messages read as sent, and nothing raises (which would end the stream of every turn)."""
    bad = ew.to_proto(ew.ChatAppend("turn-1", "turn-1:1", ChatRole.ASSISTANT, "hi", {}))
    bad.event.chat_append.ClearField("role")  # CHAT_ROLE_UNSPECIFIED
    bad_id = ew.to_proto(ew.ChatAppend("turn-3", "no-ordinal", ChatRole.ASSISTANT, "hi", {}))
    good = ew.to_proto(ew.Chunk("turn-2", ChatRole.ASSISTANT, "Bon"))
    batch = ew.batch_wire([m.SerializeToString() for m in (bad, good, bad_id)])
    read = ps.from_proto(wkpb.WorkerMessage.FromString(batch))
    assert [type(m) for m in read] == [ps.Unreadable, ps.Chunk, ps.Unreadable]
    first, _, third = read
    assert isinstance(first, ps.Unreadable) and isinstance(third, ps.Unreadable)
    assert first.turn_id == "turn-1" and "chat role is required" in first.error
    assert third.turn_id == "turn-3" and "not a turn message id" in third.error


def test_an_assignment_carries_the_recent_chat_or_says_it_is_held() -> None:
    recent = [_chat_doc("p1", 1, "one"), _chat_doc("p1", 2, "two")]
    sent = _to_worker(ps.Assign(_ref(TurnChat(recent=recent)), {"traceparent": "00-ab-cd-01"}))
    assert isinstance(sent, ew.Assignment)
    assert (sent.turn_id, sent.attempt, sent.call, sent.chat_count) == (
        "turn-1",
        2,
        LifecycleCall.STEER,
        2,
    )
    assert (sent.process.id, sent.process.engine, sent.process.params) == (
        "p1",
        "arthur",
        {"historyLimit": 10},
    )
    assert sent.recent_chat is not None
    assert [m.content for m in sent.recent_chat] == ["one", "two"]
    assert sent.project_memory is None and sent.trace_context == {"traceparent": "00-ab-cd-01"}

    held = _to_worker(ps.Assign(_ref(TurnChat(held=True))))
    assert isinstance(held, ew.Assignment) and held.recent_chat is None
    # Held is not the same as "memory had none": that one is an empty list, read by the engine.
    empty = _to_worker(ps.Assign(_ref(TurnChat())))
    assert isinstance(empty, ew.Assignment) and empty.recent_chat == []


def test_a_commit_ack_brings_the_turns_chat_only_when_it_is_all_of_it() -> None:
    chat = TurnChat()
    chat.stored_one(_chat_doc("p1", 3, "asked"))
    chat.stored_one(_chat_doc("p1", 4, "answered"))
    stored = chat.for_ack(chat_base=2, through=4)
    ack = _to_worker(ps.Ack("turn-1", True, chat=stored, held_through=4))
    assert isinstance(ack, ew.Ack) and ack.ok and ack.chat is not None
    assert [(m.id, m.content) for m in ack.chat] == [
        (chat_message_id("p1", 3), "asked"),
        (chat_message_id("p1", 4), "answered"),
    ]
    # Another turn's message landed in between: the worker is not told a chat with a gap.
    assert chat.for_ack(chat_base=2, through=5) is None
    # A redo met a message stored already: neither.
    chat.stored_one(None)
    assert chat.for_ack(chat_base=2, through=4) is None
    refused = _to_worker(ps.Ack("turn-1", False, "the lane is no longer this turn's"))
    assert refused == ew.Ack("turn-1", False, "the lane is no longer this turn's", None)
    assert _to_worker(ps.Cancel("turn-1")) == ew.Cancel("turn-1")
    assert _to_worker(ps.Welcome(30_000, 3_000)) == ew.Welcome(30_000, 3_000)


def _recent(n: int) -> list[ChatRecord]:
    return [_chat_doc("p", i, str(i)) for i in range(1, n + 1)]


def test_one_worker_holds_a_process_chat_at_a_time() -> None:
    holders: ChatHolders[str] = ChatHolders()
    first = holders.assign("w1", "p", 3, lambda pid, last: _recent(last))
    assert not first.held and len(first.recent) == 3 and holders.holder("p") == "w1"
    # The next turn on the same worker needs no chat sent.
    assert holders.assign("w1", "p", 3, lambda pid, last: _recent(last)).held
    # Its commit ack brought the turn's chat: held through the new count.
    holders.acked("w1", "p", 5)
    assert holders.assign("w1", "p", 5, lambda pid, last: []).held
    # Another worker takes the chat over: the first one's copy is stale from then on.
    holders.assign("w2", "p", 5, lambda pid, last: _recent(last))
    assert holders.holder("p") == "w2"
    assert not holders.assign("w1", "p", 5, lambda pid, last: []).held
    # w1's turn went without chat (memory had none): w2's copy is still the newest.
    assert holders.holder("p") == "w2"
    # An ack without the chat lets it go; a lost stream takes what it held with it.
    holders.assign("w2", "p", 5, lambda pid, last: _recent(last))
    holders.acked("w2", "p", None)
    assert holders.holder("p") is None
    holders.assign("w2", "p", 5, lambda pid, last: _recent(last))
    holders.drop_worker("w2")
    assert holders.holder("p") is None
    holders.assign("w1", "q", 1, lambda pid, last: _recent(last))
    holders.forget("q")
    assert holders.holder("q") is None


def test_a_worker_holds_at_most_as_many_processes_as_it_keeps() -> None:
    holders: ChatHolders[str] = ChatHolders()
    for i in range(HELD_MAX + 5):
        holders.acked("w1", f"p{i}", 1)
    assert holders.holder("p0") is None and holders.holder("p4") is None
    assert holders.holder("p5") == "w1" and holders.holder(f"p{HELD_MAX + 4}") == "w1"


def test_every_turn_of_a_process_reads_its_recipe_and_params_alike() -> None:
    # The worker reads a process's Structs once per distinct content and shares the dicts.
    first, second = (_to_worker(ps.Assign(_ref(TurnChat()))) for _ in range(2))
    assert isinstance(first, ew.Assignment) and isinstance(second, ew.Assignment)
    assert first.process == second.process
    assert second.process.params == {"historyLimit": 10}


def test_held_chat_reads_as_it_came_in_a_third_of_the_memory() -> None:
    def message(n: int) -> ChatMessage:
        return ChatMessage(
            id=chat_message_id("proc_088c70926bb8c6d65fd29f86", n),
            session_id="sess_0mx5n19114iozcrdmwt",
            think_process_id="proc_088c70926bb8c6d65fd29f86",
            process_name="chat",
            role=ChatRole.ASSISTANT,
            content=f"answer {n}",
            created_at_ms=1_000 + n,
            meta={},
        )

    expected = [message(n).model_dump(exclude_unset=True) for n in range(1, 501)]
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        held = ChatHeld()
        held.put("proc_088c70926bb8c6d65fd29f86", 500, [message(n) for n in range(1, 501)])
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    # A pydantic ChatMessage as read costs about 1.5 KB before its content; held, about 0.6.
    assert grown / 500 < 800
    got = held.get("proc_088c70926bb8c6d65fd29f86", 500)
    assert got is not None
    assert [m.model_dump(exclude_unset=True) for m in got] == expected
    got[0].content = "edited"  # held messages stay ordinary models
    assert got[0].content == "edited" and got[1].content == "answer 2"


def test_an_assignment_in_flight_holds_no_field_name_set_of_its_own() -> None:
    """A worker holds each turn in flight's assignment (issue 28: memory per turn in flight);
    pydantic's set of given field names, 2.2 KiB for a process, is its class's one set."""
    wire = ps.to_proto(ps.Assign(_ref(TurnChat(recent=_recent(2)))))
    a, b = (ew.from_proto(wkpb.DispatchMessage.FromString(wire.SerializeToString())) for _ in "ab")
    assert isinstance(a, ew.Assignment) and isinstance(b, ew.Assignment)
    assert a.process.model_fields_set is b.process.model_fields_set
    assert a.recent_chat and b.recent_chat
    assert a.recent_chat[0].model_fields_set is b.recent_chat[1].model_fields_set
    # Still what pydantic says of each: every field given, and an assignment changes no other.
    before = b.process.model_dump(exclude_unset=True)
    a.process.status = ProcessStatus.IDLE
    assert a.process.model_fields_set == set(type(a.process).model_fields)
    assert b.process.model_dump(exclude_unset=True) == before
