"""Plain text: paragraphs split at blank lines; indented runs are kept as code."""

from __future__ import annotations

import re
from pathlib import Path

from ragloop.documents.model import ParsedDocument, SectionBuilder, guess_title

_PARAGRAPHS = re.compile(r"\n\s*\n")


def parse_text(text: str, path: Path) -> ParsedDocument:
    """Parse plain text into one section of paragraphs, titled by its first line."""
    title = guess_title(text, path)
    out = SectionBuilder(title)
    paragraphs = [
        lines
        for para in _PARAGRAPHS.split(text.replace("\r\n", "\n"))
        if (lines := [ln for ln in para.split("\n") if ln.strip()])
    ]
    if len(paragraphs) > 1 and " ".join(ln.strip() for ln in paragraphs[0]) == title:
        paragraphs = paragraphs[1:]  # the title line heads the section already
    for lines in paragraphs:
        if all(ln.startswith(("    ", "\t")) for ln in lines):
            out.code("\n".join(ln[4:] if ln.startswith("    ") else ln[1:] for ln in lines))
        else:
            out.text(" ".join(ln.strip() for ln in lines))
    return ParsedDocument(path, title, out.finish())
