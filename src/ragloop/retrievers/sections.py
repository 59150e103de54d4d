"""Where a section starts: a later chunk of a long section leads back to its first chunk.

A section longer than a chunk is cut into several; the first holds its opening (a function's
signature and the sentence that says what it does, a command's purpose), the later ones its
details, under the same heading. A retriever that finds only a later chunk has found the
right section without its definition, and a judge that reads the heading may stop there.
``SectionStarts`` maps each later chunk's id to the section's first chunk, from the chunk
metadata ragloop's chunker writes (``source`` and ``section``); chunks without it (plug-in
stores) map to nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.documents import Document


class SectionStarts:
    """The first chunk of each multi-chunk section, by the id of every later chunk of it."""

    def __init__(self, chunks: Iterable[Document]):
        first: dict[tuple[str, int], Document] = {}
        self._start: dict[str, Document] = {}
        for chunk in chunks:
            section = chunk.metadata.get("section")
            if not isinstance(section, int) or isinstance(section, bool):
                continue
            key = (str(chunk.metadata.get("source", "")), section)
            if key in first:
                self._start[str(chunk.id)] = first[key]
            else:
                first[key] = chunk

    def __len__(self) -> int:
        return len(self._start)

    def start_of(self, chunk_id: str) -> Document | None:
        """The first chunk of the section ``chunk_id`` continues, or None (it starts one)."""
        return self._start.get(chunk_id)
