"""PDF with pypdf: one section per page, titled by the outline (bookmarks) when it has one."""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ragloop.documents.model import DocumentError, ParsedDocument, SectionBuilder, clean_text

_HYPHEN_BREAK = re.compile(r"(\w)-\n(\w)")


def _outline(reader: Any) -> list[tuple[int, int, str]]:
    """(page index, depth, title) for every bookmark, in page order."""
    found: list[tuple[int, int, str]] = []

    def visit(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                visit(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # a bookmark pointing nowhere is ignored
                continue
            if page is not None and page >= 0:
                found.append((page, depth, str(item.title)))

    try:
        visit(reader.outline, 1)
    except Exception:
        return []
    return sorted(found, key=lambda f: f[0])


def _strip_running_lines(texts: list[str]) -> list[str]:
    """Drop running headers and footers (first/last lines repeated on most pages), page numbers."""
    pages = [[ln for ln in t.splitlines() if ln.strip()] for t in texts]
    ends = Counter(
        re.sub(r"\d+", "#", ln.strip()) for lines in pages for ln in {*lines[:1], *lines[-1:]}
    )
    common = {ln for ln, n in ends.items() if len(pages) >= 3 and n >= 0.6 * len(pages)}

    def running(line: str) -> bool:
        key = re.sub(r"\d+", "#", line.strip())
        return key in common or key == "#"

    out = []
    for lines in pages:
        while lines and running(lines[0]):
            lines = lines[1:]
        while lines and running(lines[-1]):
            lines = lines[:-1]
        out.append("\n".join(lines))
    return out


def _paragraphs(text: str) -> list[str]:
    """Page text as paragraphs: hyphenated line breaks joined, wrapped lines merged."""
    text = _HYPHEN_BREAK.sub(r"\1\2", text.replace("\r", ""))
    parts = re.split(r"\n\s*\n", text)
    return [p for p in (clean_text(part) for part in parts) if p]


def parse_pdf(raw: bytes, path: Path) -> ParsedDocument:
    """Parse a PDF's text page by page; every section knows its page number (1-based)."""
    from io import BytesIO

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings go to the report instead
    try:
        reader = PdfReader(BytesIO(raw))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError("encrypted PDF (decrypt it first, e.g. with qpdf --decrypt)")
        pages = list(reader.pages)
    except DocumentError:
        raise
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise DocumentError(f"not a readable PDF ({exc})") from exc
    meta_title = ""
    try:
        meta_title = clean_text(str(reader.metadata.title or "")) if reader.metadata else ""
    except Exception:  # broken metadata does not stop the text
        meta_title = ""
    texts: list[str] = []
    for page in pages:
        try:
            texts.append(page.extract_text() or "")
        except Exception:  # one broken page is skipped, the rest is read
            texts.append("")
    if not any(t.strip() for t in texts):
        raise DocumentError("PDF has no text layer (scanned pages need OCR first)")
    first_line = next((ln.strip() for t in texts for ln in t.splitlines() if ln.strip()), "")
    title = meta_title or (first_line if len(first_line) <= 100 else path.stem)
    texts = _strip_running_lines(texts)  # after the title: page 1's header is often the title
    out = SectionBuilder(title)
    marks = _outline(reader)
    for number, text in enumerate(texts):
        out.page = number + 1
        started = [m for m in marks if m[0] == number]
        for _, depth, heading in started:
            out.heading(depth, heading)
        if not started:
            out.heading(99, "")  # a new page is a new section, under the same headings
        for para in _paragraphs(text):
            out.text(para)
    return ParsedDocument(path, title, out.finish())
