"""Boilerplate known at index time: what a corpus's pages all repeat, and contents/index pages.

A prose block that opens or closes ``SHARE`` of a corpus's pages (``MIN_PAGES`` at least):
"Part of the git(1) suite", a navigation footer, a licence line. Its first occurrence is
kept, set apart in a section of its own marked ``boilerplate`` (retrieval may still find
it), and every repeat is dropped. A block of dot-leader lines ("9 asn1_der_coding . . . 36")
and every block of a PDF page under a "Contents" or "Index" bookmark is marked too.
Chunks of marked sections carry ``boilerplate: True`` in their metadata; the answer never
quotes them and the judge gives them no evidence (``quotable``, ``is_boilerplate``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ragloop.documents.model import Block, ParsedDocument, Section

SHARE = 0.2
MIN_PAGES = 4
LONGEST = 500  # characters: a longer block is content, however often it recurs
# words: a shorter recurring block is a label ("Deprecated.", "Filename: src/main.rs") that
# means something where it stands, and too short to be quoted as an answer anyway
FEWEST_WORDS = 3
# blocks: only the first and last few of a page count, where headers and footers stand;
# "New in version 3.2." on a fifth of Python's library pages is content, in the middle
EDGE = 3
_LEADER = re.compile(r"(?:\s?\.){4,}\s*(?:\d+|[ivxlc]+)\b", re.IGNORECASE)
_BACK_MATTER = re.compile(r"^(table of contents|contents|index|general index|list of \w+)$", re.I)
# what varies on a repeated line: dates, times, page numbers
_VARYING = re.compile(
    r"\d{4}-\d\d-\d\d|\d\d?:\d\d(:\d\d)?|\bpage \d+( of \d+)?|\b(19|20)\d\d\b", re.IGNORECASE
)
T = TypeVar("T", bound=Mapping[str, Any])


@dataclass
class Marked:
    """What ``mark_boilerplate`` did to a corpus."""

    recurring: int = 0  # distinct recurring blocks, each kept once
    dropped: int = 0  # their repeats, removed
    leaders: int = 0  # dot-leader / contents / index blocks marked
    per_doc: dict[int, int] = field(default_factory=dict)  # id(doc) -> blocks marked or dropped


def key(text: str) -> str:
    """A block's text as compared across pages: case, spacing, dates and page numbers aside."""
    return " ".join(_VARYING.sub("#", text).casefold().split())


def dot_leaders(text: str) -> bool:
    """A contents or index entry line (or a run of them): "Introduction . . . . 3"."""
    found = len(_LEADER.findall(text))
    return found >= 2 or (found == 1 and len(text) <= 120)


def _edges(doc: ParsedDocument) -> set[int]:
    """ids of the blocks that open or close the page, where headers and footers stand."""
    blocks = [b for s in doc.sections for b in s.blocks]
    return {id(b) for b in blocks[:EDGE] + blocks[-EDGE:]}


def _candidates(doc: ParsedDocument) -> set[str]:
    edges = _edges(doc)
    return {
        key(b.text)
        for s in doc.sections
        for b in s.blocks
        if id(b) in edges
        and b.kind == "text"
        and len(b.text) <= LONGEST
        and len(b.text.split()) >= FEWEST_WORDS
    }


def mark_boilerplate(docs: list[ParsedDocument]) -> Marked:
    """Set the corpus's boilerplate apart in ``docs`` (changed in place); see the module."""
    out = Marked()
    counts = Counter(k for doc in docs for k in _candidates(doc))
    need = max(MIN_PAGES, SHARE * len(docs))
    recurring = {k for k, n in counts.items() if n >= need and any(c.isalpha() for c in k)}
    out.recurring = len(recurring)
    seen: set[str] = set()
    for doc in docs:
        sections: list[Section] = []
        marked = 0
        edges = _edges(doc)
        for section in doc.sections:
            back = section.page is not None and any(
                _BACK_MATTER.match(h.strip()) for h in section.heading_path[1:]
            )
            kept: list[Block] = []
            aside: list[Block] = []
            for block in section.blocks:
                k = key(block.text) if block.kind == "text" and id(block) in edges else ""
                if k in recurring:
                    marked += 1
                    if k not in seen:
                        seen.add(k)
                        aside.append(block)
                    else:
                        out.dropped += 1
                elif back or (block.kind == "text" and dot_leaders(block.text)):
                    marked += 1
                    out.leaders += 1
                    aside.append(block)
                else:
                    kept.append(block)
            if kept:
                section.blocks = kept
                sections.append(section)
            if aside:
                sections.append(
                    Section(section.heading_path, aside, section.page, section.anchor, True)
                )
        doc.sections = sections
        if marked:
            out.per_doc[id(doc)] = marked
    return out


def is_boilerplate(item: Mapping[str, Any]) -> bool:
    """Whether a context item (or a chunk's metadata) is marked boilerplate."""
    return bool(item.get("boilerplate"))


def quotable(items: Iterable[T]) -> list[T]:
    """The context items an answer may quote or a judge may count: boilerplate left out."""
    return [item for item in items if not is_boilerplate(item)]
