"""The passages a test set is made from: the corpus's chunks, sampled evenly by document."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from langchain_core.documents import Document

from ragloop.config import Settings
from ragloop.documents.chunking import SEPARATOR
from ragloop.errors import CorpusError
from ragloop.retrievers.corpus import load_corpus
from ragloop.retrievers.index import read_manifest

_HEADING = re.compile(r"^#{1,2} (.+)$")
_FENCE = "```"
_NUMBERING = re.compile(
    r"^(?:(?:Chapter|Part|Appendix|Section)\s+)?(?:[A-Z]?\d+(?:\.\d+)*\.?|[IVX]+\.|[A-Z]\.)\s+"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"(])")


@dataclass(frozen=True)
class Part:
    """One section inside a chunk: its own heading (or the chunk's) and its prose sentences."""

    heading: str
    sentences: tuple[str, ...]
    code: bool


@dataclass(frozen=True)
class Passage:
    """A chunk of the corpus, exactly as the index holds it, with its parts read out."""

    id: str
    text: str
    source: str
    title: str
    section: int
    parts: tuple[Part, ...]
    #: the first chunk of its section (a later one continues it mid-way)
    lead: bool = True

    @property
    def doc_title(self) -> str:
        return name_of(self.title.split(SEPARATOR)[0])

    @property
    def subject(self) -> str:
        return name_of(self.title.split(SEPARATOR)[-1])


def name_of(heading: str) -> str:
    """A heading without its section number ("9.22. Window Functions" -> "Window Functions")."""
    return _NUMBERING.sub("", heading.strip()).strip()


def split_sentences(prose: str) -> list[str]:
    """Sentences of clean prose (a full stop followed by a capital starts the next one)."""
    out: list[str] = []
    for paragraph in prose.split("\n\n"):
        paragraph = " ".join(paragraph.split())
        out.extend(s.strip() for s in _SENTENCE.split(paragraph) if s.strip())
    return out


def _parts(text: str, title: str) -> tuple[Part, ...]:
    """Sections of a chunk: a ``## heading`` line starts one; code fences are kept apart."""
    heading = name_of(title.split(SEPARATOR)[-1])
    parts: list[Part] = []
    prose: list[str] = []
    code = in_code = False

    def close() -> None:
        sentences = tuple(split_sentences("\n".join(prose)))
        if sentences or code:
            parts.append(Part(heading, sentences, code))

    for line in text.split("\n"):
        if line.startswith(_FENCE):
            in_code, code = not in_code, True
            prose.append("")
            continue
        if in_code:
            continue
        match = _HEADING.match(line)
        if match:
            if line.startswith("## "):
                close()
                heading = name_of(match.group(1).split(SEPARATOR)[-1])
                prose, code = [], False
            continue
        prose.append(line)
    close()
    return tuple(parts)


def passage_of(chunk: Document) -> Passage:
    """A chunk as a Passage (its text untouched: it is what ``reference_contexts`` holds)."""
    meta = chunk.metadata
    title = str(meta.get("title") or "")
    return Passage(
        id=str(meta.get("id") or chunk.id),
        text=chunk.page_content,
        source=str(meta.get("source") or ""),
        title=title,
        section=int(meta.get("section") or 0),
        parts=_parts(chunk.page_content, title),
    )


def load_passages(
    corpus_or_index: str | Path, chunk_size: int | None = None, chunk_overlap: int | None = None
) -> tuple[list[Passage], Path]:
    """Every chunk of a corpus folder, or of the corpus an index folder was built from.

    An index folder (one with ``manifest.json``) is read for its corpus and chunking, so the
    ids are the ones its retrievers return. ``chunk_size``/``chunk_overlap`` override the
    chunking (give the ones the index will be built with).
    """
    folder = Path(corpus_or_index)
    defaults = Settings.model_fields
    size = defaults["chunk_size"].default
    overlap = defaults["chunk_overlap"].default
    if (folder / "manifest.json").is_file():
        manifest = read_manifest(folder)
        corpus = Path(str(manifest.get("corpus_dir", "")))
        if not corpus.is_dir():
            raise CorpusError(
                f"index {folder} was built from {corpus}, which is gone: pass the corpus folder"
            )
        size = int(manifest.get("chunk_size", size))
        overlap = int(manifest.get("chunk_overlap", overlap))
        folder = corpus
    size = chunk_size or size
    overlap = overlap if chunk_overlap is None else chunk_overlap
    report = load_corpus(folder, chunk_size=size, chunk_overlap=overlap)
    passages = [passage_of(c) for c in report.chunks]
    seen: set[tuple[str, int]] = set()
    for n, p in enumerate(passages):
        key = (p.source, p.section)
        if key in seen:
            passages[n] = replace(p, lead=False)
        seen.add(key)
    return passages, folder


def balanced_order(passages: list[Passage], rng: random.Random) -> list[Passage]:
    """Passages round-robin over documents, and within each document over its sections.

    The largest file cannot crowd the others out: the first N passages come from as many
    documents as there are, each taking its turn.
    """
    by_doc: dict[str, dict[int, list[Passage]]] = defaultdict(lambda: defaultdict(list))
    for p in passages:
        by_doc[p.source][p.section].append(p)
    queues: list[list[Passage]] = []
    for source in sorted(by_doc):
        sections = [by_doc[source][s] for s in sorted(by_doc[source])]
        for group in sections:
            rng.shuffle(group)
        rng.shuffle(sections)
        order: list[Passage] = []
        while any(sections):
            for group in sections:
                if group:
                    order.append(group.pop())
        queues.append(order)
    rng.shuffle(queues)
    out: list[Passage] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out
