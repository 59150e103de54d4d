"""The section model every parser produces, and a builder that tracks the heading path."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

BlockKind = Literal["text", "code"]
_SPACE = re.compile(r"\s+")
_ITEM = re.compile(r"^\s*(- |\d+\. )")


class DocumentError(Exception):
    """A file that cannot be parsed; ``reason`` says why in words the load report shows."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def words(text: str) -> frozenset[str]:
    """A set of names written as one space-separated string (long tables stay readable)."""
    return frozenset(text.split())


def clean_text(text: str) -> str:
    """One line of prose: line-wrap newlines, indentation and runs of spaces become one space."""
    return _SPACE.sub(" ", text.replace("\u00a0", " ")).strip()


@dataclass
class Block:
    """A paragraph-like piece of a section: prose (``text``) or a code block kept whole."""

    kind: BlockKind
    text: str
    #: blocks of one record (a table row, a term with its description) share a non-zero
    #: ``keep``; the chunker keeps them in one chunk whenever they fit in one
    keep: int = 0


@dataclass
class Section:
    """The body under one heading, with the full path of headings above it."""

    heading_path: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)
    page: int | None = None
    anchor: str | None = None
    #: what the corpus repeats, or a contents/index page (``boilerplate.mark_boilerplate``)
    boilerplate: bool = False

    @property
    def title(self) -> str:
        """The heading path as one line: ``Doc › Chapter › Section``."""
        return " › ".join(self.heading_path)

    @property
    def text(self) -> str:
        """Blocks joined by blank lines; code fenced with ``` lines."""
        return "\n\n".join(render_block(b) for b in self.blocks)

    @property
    def has_code(self) -> bool:
        return any(b.kind == "code" for b in self.blocks)


@dataclass
class ParsedDocument:
    """One file as sections; ``warnings`` are repairs made while reading (for the report)."""

    path: Path
    title: str
    sections: list[Section] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: what wrote it, when the reader can tell ("asciidoc", "sphinx", "docbook", ...)
    generator: str = ""
    #: the markup it was read as ("html", "asciidoc", ...; a .txt file's sniffed markup)
    format: str = ""

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections if s.blocks)


def render_block(block: Block) -> str:
    """A block as chunk text: prose as is, code between ``` fences."""
    if block.kind == "code":
        return f"```\n{block.text}\n```"
    return block.text


class SectionBuilder:
    """Collects blocks under the current heading path; a heading of level n closes levels >= n."""

    def __init__(self, doc_title: str = ""):
        self.doc_title = doc_title
        self.stack: list[tuple[int, str]] = []
        self.sections: list[Section] = []
        self.page: int | None = None
        self._run = ""
        self._current = Section(self._path())
        self._keep = 0  # the open record's id while one is open (``record``), else 0
        self._records = 0

    def _path(self) -> tuple[str, ...]:
        path: tuple[str, ...] = ()
        for _, t in self.stack:  # a heading that repeats its parent's (or the page's) title
            if t and (not path or path[-1] != t) and (path or t != self.doc_title):
                path = (*path, t)
        if self.doc_title and (not path or path[0] != self.doc_title):
            path = (self.doc_title, *path)
        return path

    def _flush(self) -> None:
        if self._current.blocks:
            self.sections.append(self._current)

    def heading(self, level: int, title: str, anchor: str | None = None) -> None:
        """Start a new section under ``title`` at ``level`` (1 = top)."""
        self._flush()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, clean_text(title)))
        self._current = Section(self._path(), page=self.page, anchor=anchor)

    def pop_to(self, level: int) -> None:
        """Close every heading deeper than ``level`` (a nested construct ended)."""
        if self.stack and self.stack[-1][0] > level:
            self._flush()
            while self.stack and self.stack[-1][0] > level:
                self.stack.pop()
            self._current = Section(self._path(), page=self.page, anchor=None)

    def record(self) -> _Record:
        """``with builder.record():`` the blocks added inside belong together (one record)."""
        return _Record(self)

    def text(self, text: str, *, row: bool = False) -> None:
        """Add prose; list items (and table rows, ``row=True``) in a run form one block."""
        text = text.rstrip()
        if not text.strip():
            return
        kind = "row" if row else "item" if _ITEM.match(text) else ""
        blocks = self._current.blocks
        last = blocks[-1] if blocks else None
        if kind and last and last.kind == "text" and self._run == kind and last.keep == self._keep:
            last.text += "\n" + text
        else:
            blocks.append(Block("text", text if kind == "item" else text.strip(), self._keep))
        self._run = kind

    def code(self, text: str) -> None:
        text = text.strip("\n").rstrip()
        if text.strip():
            self._current.blocks.append(Block("code", text, self._keep))
            self._run = ""

    def finish(self) -> list[Section]:
        self._flush()
        self._current = Section(self._path(), page=self.page)
        return self.sections


class _Record:
    """The context manager of ``SectionBuilder.record``; records do not nest (outer one wins)."""

    def __init__(self, builder: SectionBuilder):
        self.builder = builder
        self.opened = False

    def __enter__(self) -> None:
        b = self.builder
        if not b._keep:
            b._records += 1
            b._keep, self.opened = b._records, True
            b._run = ""  # a record never joins the list run before it

    def __exit__(self, *exc: object) -> None:
        if self.opened:
            self.builder._keep = 0
            self.builder._run = ""


def guess_title(text: str, path: Path) -> str:
    """A short first line that has letters, else the file name in words."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if not line:
            continue
        if len(line) <= 100 and re.search(r"[^\W\d_]", line) and not re.match(r"^\W", line):
            return line
        break
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name
