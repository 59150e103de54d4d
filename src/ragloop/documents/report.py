"""The parsing report ``ragloop index`` prints: per format and generator, what was read.

A user pointing ragloop at a folder nobody here wrote can check that each kind of page was
understood: how many pages, sections per page, how many got a real title (not their file
name), how much was boilerplate, and which pages had no title, with a hint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloop.documents.model import ParsedDocument

HINTS = {
    "html": "no <h1> or <title> in its main content: is it a redirect or a frame page?",
    "markdown": "no '# Title' line or front-matter title",
    "rst": "no top section title (a title underlined with ===)",
    "asciidoc": "no '= Title' line or underlined title",
    "text": "the first line is not a short title line",
    "pdf": "no title in the PDF's metadata and a long first line",
}
SHOWN = 20  # untitled pages listed per kind (the count is always whole)


@dataclass
class Kind:
    """What one (format, generator) pair of a corpus produced."""

    format: str
    generator: str
    pages: int = 0
    sections: int = 0
    titled: int = 0
    boilerplate: int = 0  # blocks marked or dropped as boilerplate
    untitled: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "generator": self.generator or None,
            "pages": self.pages,
            "sections": self.sections,
            "sections_per_page": round(self.sections / self.pages, 2) if self.pages else 0.0,
            "titles_found": self.titled,
            "boilerplate_blocks": self.boilerplate,
            "untitled": self.untitled[:SHOWN],
            "untitled_count": len(self.untitled),
            "hint": HINTS.get(self.format, "") if self.untitled else "",
        }


def has_title(doc: ParsedDocument) -> bool:
    """Whether the parser found a title rather than falling back to the file's name."""
    stem = Path(doc.path).stem
    fallbacks = {stem, stem.replace("_", " ").replace("-", " ").strip(), Path(doc.path).name}
    return bool(doc.title.strip()) and doc.title not in fallbacks


@dataclass
class ParseReport:
    """Per (format, generator) counts, filled page by page."""

    kinds: dict[tuple[str, str], Kind] = field(default_factory=dict)

    def add(self, doc: ParsedDocument, rel: str, boilerplate: int = 0) -> None:
        fmt = doc.format or Path(rel).suffix.lstrip(".") or "text"
        kind = self.kinds.setdefault((fmt, doc.generator), Kind(fmt, doc.generator))
        kind.pages += 1
        kind.sections += sum(1 for s in doc.sections if s.blocks and not s.boilerplate)
        kind.boilerplate += boilerplate
        if has_title(doc):
            kind.titled += 1
        else:
            kind.untitled.append(rel)

    def rows(self) -> list[dict[str, Any]]:
        return [k.as_dict() for _, k in sorted(self.kinds.items())]
