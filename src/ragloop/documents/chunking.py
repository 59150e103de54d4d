"""Sections into chunks: never across a section boundary, then by size; code blocks stay whole."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragloop.documents.model import Block, ParsedDocument, Section, render_block

SEPARATOR = " › "


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
            units.extend(Block("code", p) for p in _split_code(block.text, size - 8))
        else:
            units.extend(Block("text", p) for p in splitter.split_text(block.text))
    return units


def section_chunks(section: Section, size: int, overlap: int) -> list[list[Block]]:
    """Blocks packed greedily into chunks of at most ``size`` characters."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    chunks: list[list[Block]] = []
    current: list[Block] = []
    length = 0
    for unit in _units(section, size, splitter):
        cost = len(render_block(unit)) + 2
        if current and length + cost > size:
            chunks.append(current)
            current, length = [], 0
        current.append(unit)
        length += cost
    if current:
        chunks.append(current)
    return chunks


def chunk_document(
    doc: ParsedDocument,
    source: str,
    *,
    chunk_size: int = 800,
    chunk_overlap: int = 120,
) -> list[Document]:
    """Chunks with ids ``<source>#<n>``; each text starts with its heading path as a # line.

    Metadata: ``id``, ``source``, ``title`` (heading path joined with " › "), ``chunk`` (n),
    ``section`` (index of the section in the document), ``page`` (PDF page or None),
    ``anchor`` and ``has_code``.
    """
    out: list[Document] = []
    for number, section in enumerate(doc.sections):
        title = SEPARATOR.join(section.heading_path) or doc.title
        for blocks in section_chunks(section, chunk_size, chunk_overlap):
            n = len(out)
            body = "\n\n".join(render_block(b) for b in blocks)
            meta = {
                "id": f"{source}#{n}",
                "source": source,
                "title": title,
                "chunk": n,
                "section": number,
                "page": section.page,
                "anchor": section.anchor,
                "has_code": any(b.kind == "code" for b in blocks),
            }
            text = f"# {title}\n\n{body}" if title else body
            out.append(Document(id=meta["id"], page_content=text, metadata=meta))
    return out
