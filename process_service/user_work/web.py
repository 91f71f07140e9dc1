"""`web_search` through the provider a tenant admin names (`work.search.url`: a SearXNG JSON
endpoint or another HTTP search API answering JSON) and `web_fetch`, a page as readable text
(HTML through markdownify, a maintained HTML-to-Markdown converter on BeautifulSoup), both
bounded in size and time (vance/work_settings.py)."""

from __future__ import annotations

import asyncio
import json
import re
from urllib.parse import quote_plus, urlsplit

import httpx
from bs4 import BeautifulSoup
from markdownify import MarkdownConverter
from pydantic import field_validator

from process_service.tool_args import ToolArgs, ToolError, ToolResult, parse_args, reason
from process_service.user_work.args import whole_checked
from process_service.user_work.netguard import FetchRefused, guarded_transport
from vance.json_types import JsonObject, JsonValue
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


class SearchArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("query", "limit")

    query: str
    limit: int

    @field_validator("query", mode="before")
    @classmethod
    def _query(cls, value: JsonValue) -> str:
        if not isinstance(value, str) or not value.strip():
            raise reason("'query' must be a non-empty text")
        return value

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: JsonValue) -> int:
        return whole_checked(value, "limit", 1, MAX_RESULTS, 8)


class FetchArgs(ToolArgs):
    NULL_WHEN_ABSENT = ("url",)

    url: str

    @field_validator("url", mode="before")
    @classmethod
    def _http(cls, value: JsonValue) -> str:
        if not isinstance(value, str) or urlsplit(value.strip()).scheme not in ("http", "https"):
            raise reason("'url' must be an http or https URL")
        return value


class SearchHit(ToolResult):
    title: str
    url: str
    snippet: str


class SearchResults(ToolResult):
    OMIT_NONE = frozenset({"note"})

    query: str
    results: list[SearchHit]
    note: str | None = None


class FetchedPage(ToolResult):
    url: str
    status: int
    content_type: str | None
    title: str | None
    text: str
    truncated: bool


async def search(settings: WorkSettings, args: JsonObject) -> SearchResults:
    parsed = parse_args(SearchArgs, args)
    query, limit = parsed.query, parsed.limit
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
        data: JsonValue = json.loads(body)  # the provider's own JSON, read by _items
    except ValueError as exc:
        raise ToolError("the search provider did not answer JSON; see " + SEARCH_URL) from exc
    results = [_result(item) for item in _items(data)]
    results = [r for r in results if r.url][:limit]
    return SearchResults(query=query, results=results, note=None if results else "no results")


def _items(data: JsonValue) -> list[JsonValue]:
    """The result list of a provider's answer, at the first of the places providers put it."""
    for path in _LISTS:
        found = data
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        if isinstance(found, list):
            return found
    return []


def _result(item: JsonValue) -> SearchHit:
    if not isinstance(item, dict):
        return SearchHit(title="", url="", snippet="")
    fields = item

    def first(*keys: str) -> str:
        return next((str(fields[k]) for k in keys if isinstance(fields.get(k), str)), "")

    return SearchHit(
        title=first("title", "name"),
        url=first("url", "link"),
        snippet=first("content", "snippet", "description")[:500],
    )


async def fetch(settings: WorkSettings, args: JsonObject) -> FetchedPage:
    url = parse_args(FetchArgs, args).url
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
    return FetchedPage(
        url=final,
        status=status,
        content_type=kind or None,
        title=title,
        text=text[:MAX_TEXT_CHARS],
        truncated=truncated,
    )


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
