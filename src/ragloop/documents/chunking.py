"""Sections into chunks: never across a section boundary, then by size; code blocks stay whole."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragloop.documents.model import Block, ParsedDocument, Section, render_block
from ragloop.text import option_line

SEPARATOR = " › "
#: where a paragraph longer than a chunk may be cut, best first: between paragraphs, lines,
#: then sentences (the end mark stays with its sentence), and only then between words; cutting
#: at any space left a chunk ending mid-sentence, and that fragment was quoted as an answer
TEXT_SEPARATORS = ("\n\n", "\n", ". ", "! ", "? ", "; ", " ", "")
# a section whose text is under this share of a chunk may share one with short neighbours;
# longer ones keep a chunk and a title of their own (chosen on the demo set's passage hit)
PACK_BELOW = 0.4


def _split_code(code: str, size: int) -> list[str]:
    """A code block too long for one chunk, cut at line ends (each piece fenced on its own)."""
    pieces: list[str] = []
    current: list[str] = []
    length = 0
    for line in code.split("\n"):
        if current and length + len(line) + 1 > size:
            pieces.append("\n".join(current))
            current, length = [], 0
        current.append(line)
        length += len(line) + 1
    if current:
        pieces.append("\n".join(current))
    return pieces


def _units(section: Section, size: int, splitter: RecursiveCharacterTextSplitter) -> list[Block]:
    """The section's blocks, with the ones longer than a chunk cut into pieces that fit."""
    units: list[Block] = []
    for block in section.blocks:
        if len(render_block(block)) <= size:
            units.append(block)
        elif block.kind == "code":
            units.extend(Block("code", p, block.keep) for p in _split_code(block.text, size - 8))
        else:
            units.extend(Block("text", p, block.keep) for p in splitter.split_text(block.text))
    return units


def _records(units: list[Block], size: int) -> list[list[Block]]:
    """Units grouped by record (same non-zero ``keep``); a record too long for a chunk is
    left as its units, which are then packed one by one. A command-line option's line on its
    own (``text.option_line``: "-i, --ignore-case") starts a record with the paragraph after
    it, so a chunk never ends with the option while what it does lies in the next."""
    out: list[list[Block]] = []
    joined = False  # the unit before was an option's line, not yet in a record
    for unit in units:
        if (joined and unit.kind == "text") or (
            unit.keep and out and out[-1][-1].keep == unit.keep
        ):
            out[-1].append(unit)
        else:
            out.append([unit])
        joined = unit.kind == "text" and not unit.keep and option_line(unit.text)
    split: list[list[Block]] = []
    for record in out:
        if sum(len(render_block(u)) + 2 for u in record) <= size:
            split.append(record)
        else:
            split.extend([u] for u in record)
    return split


def section_chunks(section: Section, size: int, overlap: int) -> list[list[Block]]:
    """Blocks packed greedily into chunks of at most ``size`` characters.

    A record (a table row read cell by cell, a term and its description) that fits in one
    chunk is never cut: the chunk ends before it instead, so "wal_buffers (integer)" is not
    the last line of one chunk while what it is lies in the next.
    """
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=list(TEXT_SEPARATORS),
        keep_separator="end",
        strip_whitespace=True,
    )
    chunks: list[list[Block]] = []
    current: list[Block] = []
    length = 0
    for record in _records(_units(section, size, splitter), size):
        cost = sum(len(render_block(u)) + 2 for u in record)
        if current and length + cost > size:
            chunks.append(current)
            current, length = [], 0
        current.extend(record)
        length += cost
    if current:
        chunks.append(current)
    return chunks


def _common(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = paths[0]
    n = 0
    while n < len(first) and all(len(p) > n and p[n] == first[n] for p in paths):
        n += 1
    return first[:n]


def _groups(
    doc: ParsedDocument, size: int, overlap: int
) -> list[list[tuple[Section, list[Block]]]]:
    """Pieces of sections in order; neighbouring short sections (same page) share a chunk."""
    groups: list[list[tuple[Section, list[Block]]]] = []
    length, open_group = 0, False
    for section in doc.sections:
        pieces = section_chunks(section, size, overlap)
        body = sum(len(render_block(b)) + 2 for b in pieces[0])
        short = len(pieces) == 1 and body <= PACK_BELOW * size
        cost = body + len(section.title) + 4
        last = groups[-1] if groups else None
        fits = (
            last is not None
            and length + cost <= size
            and last[-1][0].page == section.page
            and last[-1][0].boilerplate == section.boilerplate
        )
        if short and open_group and fits and last is not None:
            last.append((section, pieces[0]))
            length += cost
            continue
        groups.extend([(section, blocks)] for blocks in pieces)
        length, open_group = cost + len(section.title), short
    return groups


#: the default chunk size and overlap in characters (``Settings.chunk_size``/``chunk_overlap``)
DEFAULT_CHUNK_SIZE = 800
DEFAULT_CHUNK_OVERLAP = 120


def chunk_document(
    doc: ParsedDocument,
    source: str,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
) -> list[Document]:
    """Chunks with ids ``<source>#<n>``; each text starts with its heading path as a # line.

    A section never shares a chunk with part of another; short neighbouring sections are
    packed together up to ``chunk_size`` (their common heading path titles the chunk, each
    keeps its own heading as a ## line), so a page of one-line entries is not 50 tiny chunks.

    Metadata: ``id``, ``source``, ``title`` (heading path joined with " › "), ``chunk`` (n),
    ``section`` (index of the chunk's first section in the document), ``page`` (PDF page or
    None), ``anchor``, ``has_code`` and ``boilerplate`` (a chunk of what the corpus repeats
    or of a contents/index page: never shares a chunk with content).
    """
    out: list[Document] = []
    index = {id(s): n for n, s in enumerate(doc.sections)}
    for group in _groups(doc, chunk_size, chunk_overlap):
        common = _common([s.heading_path for s, _ in group]) if len(group) > 1 else None
        title = SEPARATOR.join(common if common is not None else group[0][0].heading_path)
        title = title or doc.title
        parts = []
        for section, blocks in group:
            rest = section.heading_path[len(common) :] if common is not None else ()
            body = "\n\n".join(render_block(b) for b in blocks)
            parts.append(f"## {SEPARATOR.join(rest)}\n\n{body}" if rest else body)
        first = group[0][0]
        n = len(out)
        meta = {
            "id": f"{source}#{n}",
            "source": source,
            "title": title,
            "chunk": n,
            "section": index[id(first)],
            "page": first.page,
            "anchor": first.anchor,
            "has_code": any(b.kind == "code" for _, blocks in group for b in blocks),
            "boilerplate": first.boilerplate,
        }
        body = "\n\n".join(parts)
        text = f"# {title}\n\n{body}" if title else body
        out.append(Document(id=meta["id"], page_content=text, metadata=meta))
    return out
