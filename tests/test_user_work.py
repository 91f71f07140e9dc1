"""The user's own work in the hub (seed 001 §4), over the WebSocket with the scripted model:
a document Eddie writes in one hub session is there in the next and in the REST routes; facts
and the scratchpad are kept and queried; nobody else (another user, a tenant admin) reads any
of them, through Eddie's tools or REST."""

from __future__ import annotations

import uuid

import grpc
import pytest

from tests.eddie_support import call, eddie_says
from tests.harness import System
from tests.user_work_support import (
    hub_in,
    new_tenant,
    offered_tools,
    rest_in,
    tenant_user,
    tool_results,
    tools_then_answer,
)
from vance.internal.v1 import tool_pb2 as tpb
from vance.internal.v1.tool_pb2_grpc import ToolServiceStub
from vance.protoutil import dict_to_struct, struct_to_dict
from vance.v1 import work_pb2 as wpb
from vance.v1 import work_pb2_grpc


async def test_a_document_written_in_one_hub_session_is_read_in_a_new_one(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, token = await tenant_user(system, tenant)
    path = f"notes/shopping-{m}.md"
    system.script(
        *tools_then_answer(
            f"{m} write",
            [
                call("doc_create", path=path, title="Shopping", body=f"# Shopping\n- milk {m}\n"),
                call("doc_edit", path=path, text="- eggs"),
                call("doc_edit", path=path, text="- oat milk", fromLine=2),
                call("doc_create", path=path, body="again"),
                call("doc_create", path="workspace/x.md", body="no"),
            ],
            "Saved it.",
        )
    )
    first, a = await hub_in(system, tenant, token)
    await first.ok("process-steer", {"content": f"{m} write"})
    await eddie_says(first, "Saved it.")
    created, appended, replaced, again, reserved = tool_results(system, f"{m} write")
    assert created["created"]["path"] == path and created["created"]["title"] == "Shopping"
    assert (appended.get("lines"), replaced.get("lines")) == (3, 3), (appended, replaced)
    assert "exists already" in again["error"]
    assert "workspace/" in reserved["error"]
    assert "doc_purge" not in offered_tools(system, f"{m} write")  # seed 001 §4
    assert {"doc_create", "doc_read", "doc_edit", "doc_list", "how_do_i"} <= offered_tools(
        system, f"{m} write"
    )

    # A second hub connection while the first stays: a new session with its own Eddie.
    system.script(
        *tools_then_answer(
            f"{m} read",
            [call("doc_list"), call("doc_read", path=path, numbered=True)],
            "Here it is.",
        )
    )
    second, b = await hub_in(system, tenant, token)
    assert b["sessionId"] != a["sessionId"] and b["chatProcessId"] != a["chatProcessId"]
    await second.ok("process-steer", {"content": f"{m} read"})
    await eddie_says(second, "Here it is.")
    listed, read = tool_results(system, f"{m} read")
    assert [d["path"] for d in listed["documents"]] == [path]
    assert read["body"] == "1: # Shopping\n2: - oat milk\n3: - eggs"
    assert read["source"] == "documents"
    await first.close()
    await second.close()

    # The web client's routes show the same document to its owner.
    docs = (await rest_in(system, tenant, "GET", "/documents", token)).json()["documents"]
    assert [(d["path"], d["title"], d["source"]) for d in docs] == [(path, "Shopping", "documents")]
    shown = await rest_in(system, tenant, "GET", f"/documents/{path}", token)
    assert shown.status_code == 200 and shown.json()["body"] == "# Shopping\n- oat milk\n- eggs\n"
    # doc_purge is hosted, but not in Eddie's pool: through tool_service as Eddie's process.
    purged = await ToolServiceStub(system.channel("tool_service")).InvokeTool(
        tpb.InvokeToolRequest(
            tool_name="doc_purge",
            arguments=dict_to_struct({"prefix": "notes"}),
            process_id=a["chatProcessId"],
            tool_call_id=f"purge-{m}",
        )
    )
    assert struct_to_dict(purged.result.struct_value) == {"deleted": [path]}, purged
    assert (await rest_in(system, tenant, "GET", "/documents", token)).json() == {"documents": []}
    missing = await rest_in(system, tenant, "GET", "/documents/notes/none.md", token)
    assert missing.status_code == 404 and missing.json()["detail"]["reason"] == "document_not_found"
    bad = await rest_in(system, tenant, "GET", "/documents/a/../b", token)
    assert bad.status_code in (400, 404)


async def test_another_user_and_a_tenant_admin_never_read_a_users_things(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, owner_token = await tenant_user(system, tenant)
    path = f"private/diary-{m}.md"
    system.script(
        *tools_then_answer(
            f"{m} keep",
            [
                call("doc_create", path=path, body=f"secret {m}"),
                call("relations_add", subject="user", relation="likes", object=f"tea {m}"),
                call("scratchpad_write", text=f"pin {m}"),
            ],
            "Kept.",
        )
    )
    owner, _ = await hub_in(system, tenant, owner_token)
    await owner.ok("process-steer", {"content": f"{m} keep"})
    await eddie_says(owner, "Kept.")
    fact_id = tool_results(system, f"{m} keep")[1]["fact"]["id"]
    await owner.close()

    for who in ("other", "admin"):
        _, token = await tenant_user(system, tenant, admin=who == "admin")
        marker = f"{m} peek {who}"
        system.script(
            *tools_then_answer(
                marker,
                [
                    call("doc_read", path=path),
                    call("doc_list"),
                    call("relations_query"),
                    call("relations_remove", id=fact_id),
                    call("scratchpad_read"),
                    call("doc_edit", path=path, text="defaced"),
                ],
                f"Nothing for {who}.",
            )
        )
        client, _ = await hub_in(system, tenant, token)
        await client.ok("process-steer", {"content": marker})
        await eddie_says(client, f"Nothing for {who}.")
        read, listed, facts, removed, pad, edited = tool_results(system, marker)
        assert "no document" in read["error"]
        assert listed["documents"] == []
        assert facts["facts"] == []
        assert "no such fact" in removed["error"]
        assert pad["text"] == ""
        assert "no document" in edited["error"]
        await client.close()
        assert (await rest_in(system, tenant, "GET", "/documents", token)).json() == {
            "documents": []
        }
        refused = await rest_in(system, tenant, "GET", f"/documents/{path}", token)
        assert refused.status_code == 404

    # The owner's things are untouched.
    shown = await rest_in(system, tenant, "GET", f"/documents/{path}", owner_token)
    assert shown.json()["body"] == f"secret {m}"


async def test_facts_and_the_scratchpad_are_kept_queried_and_removed(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, token = await tenant_user(system, tenant)
    system.script(
        *tools_then_answer(
            f"{m} remember",
            [
                call(
                    "relations_add",
                    subject="Anna",
                    relation="sister of",
                    object="user",
                    source="chat",
                ),
                call("relations_add", subject="anna ", relation="Sister  of", object="USER"),
                call("relations_add", subject="user", relation="prefers", object="green tea"),
                call("scratchpad_append", text="call the dentist"),
                call("scratchpad_append", text="buy stamps"),
            ],
            "Noted.",
        )
    )
    client, _ = await hub_in(system, tenant, token)
    await client.ok("process-steer", {"content": f"{m} remember"})
    await eddie_says(client, "Noted.")
    first, same, _, _, _ = tool_results(system, f"{m} remember")
    assert same["fact"]["id"] == first["fact"]["id"]  # the same fact, kept once

    system.script(
        *tools_then_answer(
            f"{m} recall",
            [
                call("relations_query", subject="ANNA"),
                call("relations_query", relation="prefers"),
                call("scratchpad_read"),
                call("relations_remove", subject="user", relation="prefers", object="Green Tea"),
                call("relations_query"),
                call("scratchpad_clear"),
                call("scratchpad_read"),
                call("how_do_i", question="work.exec.enabled sandbox"),
            ],
            "Your sister is Anna.",
        )
    )
    await client.ok("process-steer", {"content": f"{m} recall"})
    await eddie_says(client, "Your sister is Anna.")
    anna, prefers, pad, removed, left, _, cleared, howto = tool_results(system, f"{m} recall")
    assert [(f["subject"], f["relation"], f["object"], f["source"]) for f in anna["facts"]] == [
        ("anna", "Sister  of", "USER", "chat")
    ]
    assert [f["object"] for f in prefers["facts"]] == ["green tea"]
    assert pad["text"] == "call the dentist\nbuy stamps"
    assert removed["ok"] is True
    assert [f["relation"] for f in left["facts"]] == ["Sister  of"]
    assert cleared["text"] == ""
    # how_do_i, Eddie's DISCOVER, finds the operations page on the sandbox setting.
    assert "docs/operations.md" in [x["source"] for x in howto["sections"]], howto
    # Eddie is told to read the facts and the scratchpad when the user refers to them.
    prompt = str(system.model_requests(f"{m} recall")[-1]["messages"][0]["content"])
    assert "relations_query" in prompt and "scratchpad" in prompt
    await client.close()


async def test_a_user_token_reads_only_its_own_documents_over_grpc(system: System) -> None:
    tenant = new_tenant()
    owner, owner_token = await tenant_user(system, tenant)
    _, admin_token = await tenant_user(system, tenant, admin=True)
    request = wpb.ListDocumentsRequest(owner=wpb.DocumentOwner(tenant_id=tenant, user_id=owner))
    async with grpc.aio.insecure_channel(system.config.address("process_service")) as channel:
        stub = work_pb2_grpc.UserWorkServiceStub(channel)
        own = await stub.ListDocuments(request, metadata=_bearer(owner_token))
        assert list(own.documents) == []
        for token in (admin_token, ""):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.ListDocuments(request, metadata=_bearer(token))
            expected = (
                grpc.StatusCode.PERMISSION_DENIED if token else grpc.StatusCode.UNAUTHENTICATED
            )
            assert refused.value.code() == expected
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.ReadDocument(
                wpb.ReadDocumentRequest(owner=request.owner, path="none.md"),
                metadata=_bearer(owner_token),
            )
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def _bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()
