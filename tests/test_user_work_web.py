"""`web_search` and `web_fetch` through Eddie, against the test's own scripted HTTP server: the
search goes to the provider the tenant names (and says how to name one when there is none);
a fetch returns the page as readable text; loopback, private and link-local addresses are
refused, by name, by DNS answer and after a redirect, unless the tenant allows the host."""

from __future__ import annotations

import uuid

from tests.eddie_support import call, eddie_says
from tests.harness import System
from tests.user_work_support import (
    hub_in,
    new_tenant,
    page_server,
    set_tenant,
    tenant_user,
    tool_results,
    tools_then_answer,
)


async def test_search_and_fetch_reach_the_allowed_server_and_nothing_private(
    system: System,
) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, token = await tenant_user(system, tenant)
    with page_server(m) as server:
        await set_tenant(
            system,
            tenant,
            {
                "work.search.url": f"{server.base}/search?format=json",
                "work.fetch.allowHosts": f"127.0.0.1:{server.port}",
                "work.fetch.maxBytes": "10000",
            },
        )
        local = f"http://localhost:{server.port}"
        system.script(
            *tools_then_answer(
                f"{m} look up",
                [
                    call("web_search", query=f"primes {m}"),
                    call("web_fetch", url=f"{server.base}/page"),
                    call("web_fetch", url=f"{server.base}/big"),
                    # localhost is not the allowed name and resolves to loopback.
                    call("web_fetch", url=f"{local}/page?via=name"),
                    # The allowed host redirects to a host that is not allowed.
                    call("web_fetch", url=f"{server.base}/hop?to={local}/page%3Fvia%3Dhop"),
                    call("web_fetch", url="http://10.1.2.3/admin"),
                    call("web_fetch", url="http://169.254.169.254/latest/meta-data/"),
                    call("web_fetch", url="http://[::1]:9/"),
                    call("web_fetch", url="file:///etc/passwd"),
                ],
                "Found it.",
            )
        )
        client, _ = await hub_in(system, tenant, token)
        await client.ok("process-steer", {"content": f"{m} look up"})
        await eddie_says(client, "Found it.", timeout=60)
        found, page, big, by_name, by_hop, private, metadata, v6, scheme = tool_results(
            system, f"{m} look up"
        )
        assert found["results"] == [
            {
                "title": f"Result for primes {m}",
                "url": f"https://example.org/{m}",
                "snippet": f"about primes {m}",
            }
        ]
        assert page["status"] == 200 and page["title"] == f"Primes {m}"
        assert f"# Prime numbers {m}" in page["text"] and "**two** divisors" in page["text"]
        assert "script-" not in page["text"] and "color" not in page["text"]
        assert big["truncated"] is True and len(big["text"]) == 10_000
        for refused in (by_name, by_hop, private, metadata, v6):
            assert refused["error"].startswith("refused:"), refused
        assert "127.0.0.1" in by_name["error"] or "::1" in by_name["error"]
        assert "10.1.2.3" in private["error"] and "169.254.169.254" in metadata["error"]
        assert "http or https" in scheme["error"]
        # The server saw the allowed requests and the redirect, never the refused ones.
        assert f"/search?format=json&q=primes+{m}" in server.seen
        assert not [p for p in server.seen if "via=" in p and not p.startswith("/hop")]
        await client.close()


async def test_search_without_a_provider_says_how_to_configure_one(system: System) -> None:
    m = uuid.uuid4().hex[:8]
    tenant = new_tenant()
    _, token = await tenant_user(system, tenant)
    with page_server(m) as server:
        system.script(
            *tools_then_answer(
                f"{m} search",
                [
                    call("web_search", query="anything"),
                    # No allow-list in this tenant: the same loopback server is refused.
                    call("web_fetch", url=f"{server.base}/page"),
                ],
                "No search here.",
            )
        )
        client, _ = await hub_in(system, tenant, token)
        await client.ok("process-steer", {"content": f"{m} search"})
        await eddie_says(client, "No search here.")
        search, fetch = tool_results(system, f"{m} search")
        assert "not configured" in search["error"] and "work.search.url" in search["error"]
        assert "SearXNG" in search["error"]
        assert fetch["error"].startswith("refused:") and "work.fetch.allowHosts" in fetch["error"]
        assert server.seen == []
        await client.close()
