"""Load a folder of .md/.txt/.rst/.html files into overlapping chunks with stable ids."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from langchain_core.documents import Document
from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

from ragloop.errors import CorpusError

SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".html", ".htm")


class _TextOnly(HTMLParser):
    """Collects the visible text of an HTML page (script/style dropped)."""

    _SKIP = {"script", "style", "noscript", "template"}
    _BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self._SKIP:
            self._skip += 1
        self._in_title = tag == "title"
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.title += data.strip()
        self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """Strip markup from HTML; return (text, title)."""
    parser = _TextOnly()
    parser.feed(html)
    parser.close()
    text = re.sub(r"[ \t]+", " ", "".join(parser.parts))
    text = re.sub(r"\n\s*\n+", "\n\n", text)
    return text.strip(), parser.title


def _title_of(text: str, path: Path) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.lstrip("#").strip() or path.stem
    return path.stem


@dataclass
class LoadReport:
    """What loading a folder produced: chunks plus every skipped or repaired file and why."""

    root: Path
    chunks: list[Document] = field(default_factory=list)
    files: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    repaired: list[tuple[str, str]] = field(default_factory=list)
    fingerprint: str = ""


def corpus_files(root: Path) -> list[Path]:
    """Files under ``root`` with a supported suffix, in a stable order (hidden ones skipped)."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def fingerprint(root: str | Path) -> str:
    """A hash of every supported file's relative path and bytes: changes when the corpus does."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in corpus_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def load_corpus(
    root: str | Path,
    *,
    chunk_size: int = 800,
    chunk_overlap: int = 120,
    id_prefix: str = "",
) -> LoadReport:
    """Read and chunk every supported file under ``root``.

    Chunk ids are ``<id_prefix><relative/path>#<n>``. Binary and empty files are skipped and
    reported; invalid UTF-8 is decoded with replacement characters and reported.
    """
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"corpus folder not found: {root} (pass an existing folder)")
    if chunk_overlap >= chunk_size:
        raise CorpusError(
            f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
        )
    plain = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    # Markdown splits at headings first, so a section keeps its heading with its body
    markdown = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    report = LoadReport(root=root)
    for path in corpus_files(root):
        rel = path.relative_to(root).as_posix()
        raw = path.read_bytes()
        if b"\x00" in raw[:8192]:
            report.skipped.append((rel, "binary file"))
            continue
        text = raw.decode("utf-8", errors="replace")
        if "\ufffd" in text and "\ufffd".encode() not in raw:
            report.repaired.append((rel, "invalid UTF-8 bytes replaced with U+FFFD"))
        title = ""
        if path.suffix.lower() in (".html", ".htm"):
            text, title = html_to_text(text)
        if not text.strip():
            report.skipped.append((rel, "empty file"))
            continue
        title = title or _title_of(text, path)
        report.files += 1
        splitter = markdown if path.suffix.lower() in (".md", ".markdown") else plain
        for n, piece in enumerate(splitter.split_text(text)):
            chunk_id = f"{id_prefix}{rel}#{n}"
            meta = {"id": chunk_id, "source": f"{id_prefix}{rel}", "title": title, "chunk": n}
            report.chunks.append(Document(id=chunk_id, page_content=piece, metadata=meta))
    if not report.chunks:
        why = (
            "; ".join(f"{p}: {r}" for p, r in report.skipped[:5]) or "no .md/.txt/.rst/.html files"
        )
        raise CorpusError(f"corpus folder {root} has no usable text ({why})")
    report.fingerprint = fingerprint(root)
    return report
