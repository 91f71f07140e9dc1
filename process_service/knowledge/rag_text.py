"""A RAG document's text and its chunks: Markdown and plain text as they are, PDF through pypdf;
chunks of about CHUNK_CHARS, cut at headings, blank lines, then sentence and word ends, so a
chunk holds whole paragraphs where it can."""

from __future__ import annotations

import io
import re

from vance.errors import InvalidArgumentError

CHUNK_CHARS = 1_200
MAX_CHUNKS = 2_000
MAX_TEXT_CHARS = 2_000_000
MEDIA_TYPES = ("text/markdown", "text/plain", "application/pdf")
_HEADING = re.compile(r"^#{1,6}\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def media_type_of(name: str, given: str) -> str:
    """The declared type, or one from the file name's ending."""
    media = given.split(";", 1)[0].strip().lower()
    if media:
        if media not in MEDIA_TYPES:
            raise InvalidArgumentError(
                f"media type {media!r} is not indexed; use one of {', '.join(MEDIA_TYPES)}",
                reason="unsupported_media_type",
            )
        return media
    lower = name.lower()
    if lower.endswith((".md", ".markdown")):
        return "text/markdown"
    if lower.endswith(".pdf"):
        return "application/pdf"
    if lower.endswith((".txt", ".text")):
        return "text/plain"
    raise InvalidArgumentError(
        f"cannot tell the type of {name!r}: name it .md, .txt or .pdf, or give mediaType",
        reason="unsupported_media_type",
    )


def extract(media_type: str, content: bytes) -> str:
    if media_type == "application/pdf":
        text = _pdf_text(content)
    else:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(
                f"the file is not UTF-8 text (byte {exc.start})", reason="bad_text"
            ) from None
    text = text.replace("\r\n", "\n").replace("\x00", "")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidArgumentError(
            f"the text is longer than {MAX_TEXT_CHARS} characters", reason="too_long"
        )
    if not text.strip():
        raise InvalidArgumentError("the file holds no text to index", reason="no_text")
    return text


def _pdf_text(content: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(content))
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise InvalidArgumentError(f"the PDF cannot be read: {exc}", reason="bad_pdf") from None


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    length = 0

    def close() -> None:
        nonlocal length
        if current:
            out.append("\n\n".join(current))
            current.clear()
            length = 0

    for block in _blocks(text):
        if _HEADING.match(block) or length + len(block) > size:
            close()
        for piece in _split_long(block, size):
            if length + len(piece) > size:
                close()
            current.append(piece)
            length += len(piece) + 2
    close()
    if len(out) > MAX_CHUNKS:
        raise InvalidArgumentError(
            f"the text makes more than {MAX_CHUNKS} chunks; split the file", reason="too_long"
        )
    return out


def _blocks(text: str) -> list[str]:
    """Paragraphs (blank-line separated), each heading line a block of its own."""
    blocks: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in para.strip().split("\n"):
            if _HEADING.match(line):
                if lines:
                    blocks.append("\n".join(lines))
                    lines = []
            lines.append(line.rstrip())
        if lines and "\n".join(lines).strip():
            blocks.append("\n".join(lines).strip())
    return blocks


def _split_long(block: str, size: int) -> list[str]:
    if len(block) <= size:
        return [block]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(block):
        while len(sentence) > size:  # a sentence longer than a chunk: at a space before size
            cut = sentence.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut])
            sentence = sentence[cut:].lstrip()
        if current and len(current) + len(sentence) + 1 > size:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces
