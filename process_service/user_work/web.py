"""`web_search` through the provider a tenant admin names (`work.search.url`: a SearXNG JSON
endpoint or another HTTP search API answering JSON) and `web_fetch`, a page as readable text
(HTML through markdownify, a maintained HTML-to-Markdown converter on BeautifulSoup), both
bounded in size and time (vance/work_settings.py)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import quote_plus, urlsplit

import httpx
from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from process_service.tool_args import ToolError
from process_service.user_work.args import whole
from process_service.user_work.netguard import FetchRefused, guarded_transport
from vance.work_settings import SEARCH_URL, WorkSettings

MAX_TEXT_CHARS = 20_000
MAX_RESULTS = 20
MAX_REDIRECTS = 5
SEARCH_TIMEOUT_S = 10.0
SEARCH_MAX_BYTES = 2_000_000
_BLANKS = re.compile(r"\n{3,}")
_AGENT = "Vancetope-web_fetch/1.0"
# Where common search APIs put their results: SearXNG, Google CSE, Brave, SerpAPI, Bing.
_LISTS = (("results",), ("items",), ("web", "results"), ("organic_results",), ("webPages", "value"))


def not_configured() -> str:
    return (
        "web search is not configured for this tenant: a tenant admin sets "
        f"{SEARCH_URL} to a search endpoint answering JSON, e.g. a SearXNG instance "
        "http://searxng:8080/search?format=json (or a URL with {query} where the words go), "
        "with PATCH /brain/<tenant>/settings"
    )


async def _read(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), True
    return bytes(body), False


async def search(settings: WorkSettings, args: dict[str, Any]) -> dict[str, Any]:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolError("'query' must be a non-empty text")
    limit = whole(args.get("limit"), "limit", 1, MAX_RESULTS, 8)
    if not settings.search_url:
        raise ToolError(not_configured())
    if "{query}" in settings.search_url:
        url = httpx.URL(settings.search_url.replace("{query}", quote_plus(query.strip())))
    else:  # q= beside the URL's own parameters (httpx's params= would replace them)
        url = httpx.URL(settings.search_url).copy_merge_params({"q": query.strip()})
    # The provider is the admin's choice (often a SearXNG on the local network), so it is not
    # held to web_fetch's public-address rule.
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=SEARCH_TIMEOUT_S) as http:
            async with http.stream("GET", url, headers={"Accept": "application/json"}) as r:
                body, _ = await _read(r, SEARCH_MAX_BYTES)
                status = r.status_code
    except httpx.HTTPError as exc:
        raise ToolError(f"the search provider did not answer: {exc!r}") from exc
    if status != 200:
        raise ToolError(f"the search provider answered HTTP {status}")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ToolError("the search provider did not answer JSON; see " + SEARCH_URL) from exc
    results = [_result(item) for item in _items(data)]
    results = [r for r in results if r["url"]][:limit]
    return {"query": query, "results": results, **({} if results else {"note": "no results"})}


def _items(data: Any) -> list[Any]:
    for path in _LISTS:
        found = data
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        if isinstance(found, list):
            return found
    return []


def _result(item: Any) -> dict[str, str]:
    if not isinstance(item, dict):
        return {"title": "", "url": "", "snippet": ""}

    def first(*keys: str) -> str:
        return next((str(item[k]) for k in keys if isinstance(item.get(k), str)), "")

    return {
        "title": first("title", "name"),
        "url": first("url", "link"),
        "snippet": first("content", "snippet", "description")[:500],
    }


async def fetch(settings: WorkSettings, args: dict[str, Any]) -> dict[str, Any]:
    url = args.get("url")
    if not isinstance(url, str) or urlsplit(url.strip()).scheme not in ("http", "https"):
        raise ToolError("'url' must be an http or https URL")
    timeout = settings.fetch_timeout_ms / 1000
    try:
        async with asyncio.timeout(timeout):
            async with httpx.AsyncClient(
                transport=guarded_transport(settings.fetch_allow_hosts),
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
                timeout=timeout,
                headers={"User-Agent": _AGENT},
            ) as http:
                async with http.stream("GET", url.strip()) as r:
                    raw, cut = await _read(r, settings.fetch_max_bytes)
                    status, final = r.status_code, str(r.url)
                    kind = r.headers.get("content-type", "").split(";")[0].strip().lower()
                    encoding = r.charset_encoding or "utf-8"
    except FetchRefused as exc:
        raise ToolError(f"refused: {exc}") from exc
    except TimeoutError as exc:
        raise ToolError(f"{url} did not answer within {timeout:g}s") from exc
    except httpx.TooManyRedirects as exc:
        raise ToolError(f"{url} redirects more than {MAX_REDIRECTS} times") from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"{url} could not be fetched: {exc!r}") from exc
    text, title = _readable(raw, kind, encoding)
    truncated = cut or len(text) > MAX_TEXT_CHARS
    return {
        "url": final,
        "status": status,
        "contentType": kind or None,
        "title": title,
        "text": text[:MAX_TEXT_CHARS],
        "truncated": truncated,
    }


def _readable(raw: bytes, kind: str, encoding: str) -> tuple[str, str | None]:
    try:
        decoded = raw.decode(encoding, errors="replace")
    except LookupError:
        decoded = raw.decode("utf-8", errors="replace")
    if kind in ("text/html", "application/xhtml+xml") or (
        not kind and "<html" in decoded[:500].lower()
    ):
        soup = BeautifulSoup(decoded, "html.parser")
        title = soup.title.get_text(strip=True) if soup.title else None
        for tag in soup(["script", "style", "noscript", "template", "svg", "head"]):
            tag.decompose()
        text = MarkdownConverter(heading_style="ATX").convert_soup(soup)
        lines = "\n".join(line.rstrip() for line in text.splitlines())
        return _BLANKS.sub("\n\n", lines).strip(), title
    if kind.startswith("text/") or kind in ("application/json", "application/xml") or not kind:
        return decoded, None
    raise ToolError(f"the page is {kind}, not text; web_fetch returns text only")
