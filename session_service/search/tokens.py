"""Text to search tokens, and query-centred snippets with highlight ranges."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

_WORD = re.compile(r"\w+")
MAX_TOKEN_LEN = 40
MIN_PREFIX_LEN = 2
# Long messages (pasted logs, files) are indexed by their beginning only: what a person
# remembers of a conversation is rarely past the first pages of one message.
MAX_INDEXED_CHARS = 20_000
SNIPPET_CHARS = 160

# The most frequent English words: in nearly every session, so their posting lists would be the
# largest documents of the index while telling no session apart.
STOPWORDS = frozenset(
    """a an and are as at be but by can do for from had has have he her his i if in into is it
    its me my no not of on or our she so than that the their them then there these they this to
    was we were what when which who will with you your""".split()
)


def normalize(text: str) -> str:
    """NFKC and case-folded, so full-width, upper- and lower-case spellings are one token."""
    if text.isascii():
        return text.lower()  # the same result, without the Unicode tables
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """The distinct index tokens of a text, in order of first occurrence."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(normalize(text[:MAX_INDEXED_CHARS])):
        word = match.group()
        if len(word) <= MAX_TOKEN_LEN and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


@dataclass(frozen=True)
class QueryTerm:
    """One word of a query; the last word of a query also matches as a prefix (type-ahead)."""

    text: str
    prefix: bool

    def matches(self, token: str) -> bool:
        return token.startswith(self.text) if self.prefix else token == self.text


def query_terms(query: str) -> list[QueryTerm]:
    words = tokens(query)
    if not words:
        return []
    # A trailing space means the user finished the last word.
    last_open = not query.endswith((" ", "\t", "\n")) and len(words[-1]) >= MIN_PREFIX_LEN
    return [QueryTerm(w, prefix=last_open and i == len(words) - 1) for i, w in enumerate(words)]


@dataclass(frozen=True)
class Snippet:
    text: str
    highlights: list[tuple[int, int]]  # [start, end) within text


def _matching_words(text: str, terms: list[QueryTerm]) -> list[tuple[int, int]]:
    """The [start, end) of every word of `text` that a term matches."""
    if text.isascii() and all(t.text.isascii() for t in terms):
        # One regex scan instead of normalising every word: for ASCII, normalize() is
        # lower(), which an ASCII case-insensitive match of the lowercase term is the same as.
        return [m.span() for m in _ascii_matcher(tuple(terms)).finditer(text)]
    return [
        m.span()
        for m in _WORD.finditer(text)
        if any(t.matches(normalize(m.group())) for t in terms)
    ]


@functools.lru_cache(maxsize=64)
def _ascii_matcher(terms: tuple[QueryTerm, ...]) -> re.Pattern[str]:
    """Whole words equal to a term, or starting with a prefix term (the rest of the word
    taken with it); neither alternative can match part of a word."""
    parts = [re.escape(t.text) + (r"\w*" if t.prefix else r"(?!\w)") for t in terms]
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + ")", re.ASCII | re.IGNORECASE)


def snippet(text: str, terms: list[QueryTerm], width: int = SNIPPET_CHARS) -> Snippet:
    """A window of `text` around the first word matching a term, cut at word boundaries, with
    every matching word in the window highlighted."""
    hits = _matching_words(text, terms)
    if not hits:
        cut = text[:width]
        return Snippet(cut + ("…" if len(text) > width else ""), [])
    first_start, first_end = hits[0]
    start = max(0, first_start - width // 3)
    end = min(len(text), start + width)
    start = max(0, min(start, end - width))
    # Move the edges onto word boundaries so no word is shown half.
    if start > 0:
        space = text.find(" ", start, first_start)
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", first_end, end)
        end = space if space != -1 else end
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    body = " ".join(text[start:end].split())
    out = prefix + body + suffix
    # "…" is no word character: the words of the body are those of `out`, shifted.
    return Snippet(
        out, [(s + len(prefix), e + len(prefix)) for s, e in _matching_words(body, terms)]
    )
