"""RAG (issue 27 item 2; seed 000 §3.8 item 4): a project's uploaded files (Markdown, text,
PDF) and a user's own documents are chunked and indexed; `rag_query` finds passages by keyword
(BM25 over the session-search tokens) and, with an embedding model, by vector too (hybrid);
with `rag.autoInject` the best chunks above `rag.minScore` enter Arthur's prompt as
`<rag-context>` with their sources."""

from __future__ import annotations

import base64
import uuid

from tests.eddie_support import call
from tests.harness import System, eventually
from tests.knowledge_support import block, new_project, rest, set_project, system_prompts
from tests.knowledge_support import tool_messages as results
from tests.test_arthur_flow import assistant_says
from tests.user_work_support import hub_in, set_tenant, tenant_user, tools_then_answer
from vance.testing.scripted_llm import Rule


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF showing `text` (Helvetica), with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


HANDBOOK = """# Operations handbook

## Zebra keys
Rotate the zebra{m} keys every monday with the vault tool, then tell the on-call person.

## Lunch
The canteen opens at half past eleven and serves soup on fridays.
"""


async def test_uploaded_files_are_found_by_rag_query_and_auto_injected(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    project = await new_project(system)
    await set_project(system, project, {"rag.autoInject": "true", "rag.minScore": "0.3"})
    token = await system.login()
    docs = f"/projects/{project}/rag/documents"
    up = await rest(
        system, "POST", docs, token, body={"name": "handbook.md", "text": HANDBOOK.format(m=m)}
    )
    assert up.status_code == 200, up.text
    assert up.json()["chunks"] >= 2 and up.json()["mediaType"] == "text/markdown"
    pdf = base64.b64encode(tiny_pdf(f"Quokka{m} feeding is at noon")).decode()
    up = await rest(system, "POST", docs, token, body={"name": "zoo.pdf", "contentBase64": pdf})
    assert up.status_code == 200, up.text
    assert up.json()["mediaType"] == "application/pdf"
    for bad, reason in (
        ({"name": "x.png", "contentBase64": "AAAA"}, "unsupported_media_type"),
        ({"name": "x.md"}, "bad_upload"),
        ({"name": "x.pdf", "contentBase64": "not base64!"}, "bad_base64"),
        ({"name": "x.pdf", "contentBase64": base64.b64encode(b"%PDF-junk").decode()}, "bad_pdf"),
    ):
        r = await rest(system, "POST", docs, token, body=bad)
        assert r.status_code == 400 and reason in r.text, (bad, r.text)
    listed = (await rest(system, "GET", docs, token)).json()["documents"]
    assert [d["name"] for d in listed] == ["handbook.md", "zoo.pdf"]

    client = await system.connect(token)
    await client.ok("session-create", {"projectId": project})
    await assistant_says(client, "Hi, I'm Arthur")
    system.script(
        Rule(
            match_last=f"search {m}",
            tool_calls=[call("rag_query", query=f"when is quokka{m} feeding", topK=2)],
        )
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"search {m}"})
    await assistant_says(client, f"search {m}")
    (found,) = results(system, f"search {m}")
    assert found["ranking"] == "keyword"
    assert found["chunks"][0]["source"] == "project:zoo.pdf", found
    assert "noon" in found["chunks"][0]["text"]

    ask = f"how do I rotate the zebra{m} keys"
    await client.ok("process-steer", {"processName": "chat", "content": ask})
    await assistant_says(client, ask)
    prompt = (await eventually(lambda: system_prompts(system, ask)))[-1]
    injected = block(prompt, "rag-context")
    assert 'source="project:handbook.md"' in injected and "vault tool" in injected, prompt
    assert "canteen" not in injected and "Quokka" not in injected
    # Nothing scores above rag.minScore: no block.
    other = f"tell me a joke {uuid.uuid4().hex[:8]}"
    await client.ok("process-steer", {"processName": "chat", "content": other})
    await assistant_says(client, other)
    assert "<rag-context>" not in (await eventually(lambda: system_prompts(system, other)))[-1]

    gone = await rest(system, "DELETE", f"{docs}/handbook.md", token)
    assert gone.status_code == 200, gone.text
    assert (await rest(system, "DELETE", f"{docs}/handbook.md", token)).status_code == 404
    system.script(
        Rule(match_last=f"again {m}", tool_calls=[call("rag_query", query=f"zebra{m} keys")])
    )
    await client.ok("process-steer", {"processName": "chat", "content": f"again {m}"})
    await assistant_says(client, f"again {m}")
    (after,) = results(system, f"again {m}")
    assert after["chunks"] == [], after
    await client.close()


async def test_the_users_documents_are_indexed_and_ranked_hybrid_with_embeddings(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = f"t{uuid.uuid4().hex[:10]}"
    _, token = await tenant_user(system, tenant)
    await set_tenant(system, tenant, {"rag.embeddingModel": "openai/scripted-embed"})
    # The scripted embeddings make a word no document holds mean what the pets note says.
    system.script(
        Rule(purpose="embeddings", match=f"feline{m}", text="cats purr when content", repeat=True)
    )
    system.script(
        *tools_then_answer(
            f"{m} write",
            [
                call("doc_create", path=f"notes/pets-{m}.md", body="Cats purr when content."),
                call("doc_create", path=f"notes/mail-{m}.md", body="Dogs bark at the mail."),
            ],
            "Written.",
        ),
        *tools_then_answer(
            f"{m} find", [call("rag_query", query=f"feline{m}", topK=1)], "Found it."
        ),
    )
    client, _ = await hub_in(system, tenant, token)
    await client.ok("process-steer", {"content": f"{m} write"})
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and "Written." in f["data"]["content"],
        timeout=30,
    )
    await client.ok("process-steer", {"content": f"{m} find"})
    await client.wait_for(
        lambda f: f["type"] == "chat-message-appended" and "Found it." in f["data"]["content"],
        timeout=30,
    )
    (found,) = results(system, f"{m} find")
    assert found["ranking"] == "hybrid", found
    assert [c["source"] for c in found["chunks"]] == [f"documents:notes/pets-{m}.md"], found
    embedded = system.llm.script.side_requests.get("embeddings") or []
    assert any(r.get("model") == "scripted-embed" for r in embedded)
    await client.close()
