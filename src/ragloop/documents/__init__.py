"""Documents: one parser per format into sections with their heading path, then chunks.

The interface other parts of ragloop (the loader, the test set generator, the loop's judge)
build on::

    from ragloop.documents import parse_file, chunk_document, SUFFIXES

    doc = parse_file(path)          # ParsedDocument, or raises DocumentError(reason)
    doc.title                       # "json — JSON encoder and decoder"
    for section in doc.sections:    # in reading order; empty sections are left out
        section.heading_path        # (doc title, "Basic Usage", "json.dumps")
        section.title               # the path joined with " › "
        section.blocks              # [Block(kind="text"|"code", text=...)]: prose is clean text
                                    # (no markup, wraps joined); code is verbatim and whole
        section.text                # blocks joined by blank lines, code between ``` fences
        section.page                # 1-based page for PDF, else None
        section.anchor              # the section's id in the source (rst/html/md), if any
    chunks = chunk_document(doc, "rel/path.rst", chunk_size=800, chunk_overlap=120)

Formats (by suffix): reStructuredText (docutils, with tolerant handlers for Sphinx roles and
directives), Markdown (markdown-it-py), HTML (lxml; the main content without navigation), PDF
(pypdf; one section per page under its bookmarks), AsciiDoc (sections, labelled lists,
listing blocks), plain text (a ``.txt`` written in AsciiDoc, reST or Markdown is read as
that). Any other suffix raises
``DocumentError("unsupported format ...")`` so the caller can report and skip the file.
"""

from __future__ import annotations

from pathlib import Path

from ragloop.documents.chunking import chunk_document
from ragloop.documents.model import (
    Block,
    DocumentError,
    ParsedDocument,
    Section,
    clean_text,
    render_block,
)

FORMATS = {
    ".rst": "rst",
    ".rest": "rst",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".asc": "asciidoc",
    ".txt": "text",  # read as AsciiDoc, reST or Markdown when it is written in one
    ".text": "text",
}
SUFFIXES = tuple(FORMATS)
EMPTY_AFTER_PARSING = {
    "rst": "no text once the markup is read (only directives that need Sphinx, e.g. autodoc?)",
    "html": "no content besides navigation (a table-of-contents page?)",
}

__all__ = [
    "FORMATS",
    "SUFFIXES",
    "Block",
    "DocumentError",
    "ParsedDocument",
    "Section",
    "chunk_document",
    "clean_text",
    "decode",
    "parse_file",
    "parse_text",
    "render_block",
]


def decode(raw: bytes) -> tuple[str, list[str]]:
    """Text from bytes as UTF-8 (a BOM is dropped); bad bytes are replaced and reported."""
    from ragloop.safety.encoding import sniff_encoding

    encoding, skip = sniff_encoding(raw)  # UTF-16/32 text is text, not binary
    if encoding and encoding != "utf-8":
        return raw[skip:].decode(encoding, errors="replace"), []
    if b"\x00" in raw[:8192]:
        raise DocumentError("binary file")
    text = raw.decode("utf-8-sig", errors="replace")
    warnings = []
    if "\ufffd" in text and "\ufffd".encode() not in raw:
        warnings.append("invalid UTF-8 bytes replaced with U+FFFD")
    return text, warnings


def parse_text(text: str, path: str | Path, fmt: str | None = None) -> ParsedDocument:
    """Parse already-decoded text in the format named (default: from the suffix)."""
    path = Path(path)
    fmt = fmt or FORMATS.get(path.suffix.lower())
    doc = _parse_as(text, path, fmt)
    doc.format = doc.format or fmt or ""
    return doc


def _parse_as(text: str, path: Path, fmt: str | None) -> ParsedDocument:
    if fmt == "rst":
        from ragloop.documents.rst import parse_rst

        return parse_rst(text, path)
    if fmt == "markdown":
        from ragloop.documents.markdown import parse_markdown

        return parse_markdown(text, path)
    if fmt == "html":
        from ragloop.documents.html import parse_html

        return parse_html(text, path)
    if fmt == "asciidoc":
        from ragloop.documents.asciidoc import parse_asciidoc

        return parse_asciidoc(text, path)
    if fmt == "text":
        from ragloop.documents.sniff import sniff_markup

        markup = sniff_markup(text)
        if markup != "text":
            return parse_text(text, path, markup)
        from ragloop.documents.text import parse_text as parse_plain

        return parse_plain(text, path)
    known = ", ".join(sorted(set(FORMATS)))
    raise DocumentError(f"unsupported format {path.suffix or '(no suffix)'} (known: {known})")


def parse_file(path: str | Path) -> ParsedDocument:
    """Read and parse one file; raises DocumentError with a reason when it cannot."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        return parse_text("", path)  # raises: unsupported format
    raw = path.read_bytes()
    if not raw.strip():
        raise DocumentError("empty file")
    if fmt == "pdf":
        from ragloop.documents.pdf import parse_pdf

        doc = parse_pdf(raw, path)
        doc.format = "pdf"
    else:
        text, warnings = decode(raw)
        try:
            doc = parse_text(text, path, fmt)
        except DocumentError:
            raise
        except Exception as exc:  # a parser bug on one odd file: report it, index the rest
            raise DocumentError(
                f"could not be parsed as {fmt} ({type(exc).__name__}: {exc})"
            ) from exc
        doc.warnings.extend(warnings)
    if not any(s.blocks for s in doc.sections):
        raise DocumentError(EMPTY_AFTER_PARSING.get(fmt, "no text once the markup is read"))
    return doc
