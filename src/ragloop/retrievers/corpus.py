"""Load a folder of documents into chunks with stable ids (parsing lives in ragloop.documents)."""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.documents import Document

from ragloop.documents import (
    SUFFIXES,
    DocumentError,
    ParsedDocument,
    chunk_document,
    parse_file,
    parse_text,
)
from ragloop.documents.boilerplate import mark_boilerplate
from ragloop.documents.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from ragloop.documents.report import ParseReport
from ragloop.errors import CorpusError


def html_to_text(html: str) -> tuple[str, str]:
    """The main text of an HTML page and its title (kept for callers of the old loader)."""
    doc = parse_text(html, "page.html")
    return doc.text, doc.title


@dataclass
class LoadReport:
    """What loading a folder produced: chunks plus every skipped or repaired file and why."""

    root: Path
    chunks: list[Document] = field(default_factory=list)
    files: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    repaired: list[tuple[str, str]] = field(default_factory=list)
    fingerprint: str = ""
    #: per format and generator: pages, sections, titles found, boilerplate
    parsing: ParseReport = field(default_factory=ParseReport)
    boilerplate_dropped: int = 0  # repeats of recurring blocks left out of the index


@dataclass
class _Walk:
    """Every visible file under a root, and what could not be walked (and why)."""

    files: list[Path] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)


def _walk(root: Path) -> _Walk:
    """Files under ``root``, hidden ones skipped, without recursion (1000-deep folders work).

    Folder symlinks are not followed; a file symlink counts only when it points inside the
    corpus; an unreadable folder is reported, never silently skipped.
    """
    out = _Walk()
    top = root.resolve()
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                items = sorted(entries, key=lambda e: e.name)
        except OSError as exc:
            rel = folder.relative_to(root).as_posix() if folder != root else "."
            out.problems.append((rel + "/", f"unreadable folder ({exc.strerror or exc})"))
            continue
        for entry in items:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                    continue
                if entry.is_symlink():
                    target = path.resolve()
                    if target != top and top not in target.parents:
                        rel = path.relative_to(root).as_posix()
                        out.problems.append((rel, "symlink pointing outside the corpus: not read"))
                        continue
                    if not target.is_file():
                        continue
                elif not entry.is_file(follow_symlinks=False):
                    continue
            except OSError as exc:
                rel = path.relative_to(root).as_posix()
                out.problems.append((rel, f"unreadable ({exc.strerror or exc})"))
                continue
            out.files.append(path)
    out.files.sort()
    return out


def corpus_files(root: Path) -> list[Path]:
    """Files under ``root`` with a supported suffix, in a stable order (hidden ones skipped)."""
    return [p for p in _walk(Path(root)).files if p.suffix.lower() in SUFFIXES]


def unsupported_files(root: Path) -> list[tuple[str, str]]:
    """One (example path, reason) per unsupported suffix, so a folder of images is one line."""
    by_suffix: dict[str, list[str]] = defaultdict(list)
    for p in _walk(Path(root)).files:
        if p.suffix.lower() not in SUFFIXES:
            by_suffix[p.suffix.lower() or "(no suffix)"].append(p.relative_to(root).as_posix())
    return [
        (
            paths[0] + (f" and {len(paths) - 1} more {suffix} file(s)" if len(paths) > 1 else ""),
            f"unsupported format {suffix}",
        )
        for suffix, paths in by_suffix.items()
    ]


def fingerprint(root: str | Path) -> str:
    """A hash of every supported file's relative path and bytes: changes when the corpus does."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in corpus_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:  # unreadable now: reported by load_corpus, changes the print
            digest.update(b"unreadable")
    return digest.hexdigest()[:16]


def load_corpus(
    root: str | Path,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    id_prefix: str = "",
) -> LoadReport:
    """Parse and chunk every supported file under ``root``.

    Chunk ids are ``<id_prefix><relative/path>#<n>``. Boilerplate (what a large share of
    the pages repeat, contents and index pages) is marked in chunk metadata and its repeats
    dropped (``documents.boilerplate``). Files that cannot be parsed (binary,
    empty, broken PDF, unsupported format) are skipped and reported; invalid UTF-8 is decoded
    with replacement characters and reported.
    """
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"corpus folder not found: {root} (pass an existing folder)")
    if chunk_overlap >= chunk_size:
        raise CorpusError(
            f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
        )
    report = LoadReport(root=root)
    docs: list[tuple[str, ParsedDocument]] = []
    for path in corpus_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            doc = parse_file(path)
        except DocumentError as exc:
            report.skipped.append((rel, exc.reason))
            continue
        except OSError as exc:  # permission denied, vanished: reported, the rest is indexed
            report.skipped.append((rel, f"cannot read ({exc.strerror or exc})"))
            continue
        report.repaired.extend((rel, warning) for warning in doc.warnings)
        report.files += 1
        docs.append((rel, doc))
    # what the corpus's pages all repeat is known only once every page is read
    marked = mark_boilerplate([doc for _, doc in docs])
    report.boilerplate_dropped = marked.dropped
    for rel, doc in docs:
        report.parsing.add(doc, rel, marked.per_doc.get(id(doc), 0))
        report.chunks.extend(
            chunk_document(
                doc, f"{id_prefix}{rel}", chunk_size=chunk_size, chunk_overlap=chunk_overlap
            )
        )
    report.skipped.extend(unsupported_files(root))
    report.skipped.extend(_walk(root).problems)
    if not report.chunks:
        why = "; ".join(f"{p}: {r}" for p, r in report.skipped[:5]) or "no supported files"
        raise CorpusError(
            f"corpus folder {root} has no usable text ({why}); ragloop reads {' '.join(SUFFIXES)}"
        )
    report.fingerprint = fingerprint(root)
    return report
