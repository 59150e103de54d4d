"""A persisted index folder: FAISS + bm25s + a manifest that detects stale or mixed indexes."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from ragloop.documents.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from ragloop.embeddings.batching import EmbedPlan
from ragloop.embeddings.cache import VectorCache
from ragloop.embeddings.identity import manifest_fields
from ragloop.errors import IndexError_
from ragloop.retrievers.corpus import LoadReport, load_corpus
from ragloop.retrievers.dense import build_faiss, load_faiss, save_faiss
from ragloop.retrievers.manifest import (
    FORMAT_VERSION,
    check_replace,
    chunker_fingerprint,
    read_manifest,
    refuse_other_embeddings,
    replaced_by,
    stale_reasons,
)
from ragloop.retrievers.sparse import build_bm25, load_bm25, save_bm25
from ragloop.safety import atomic_write_text, folder_lock, replace_folder
from ragloop.safety.owned import check_replaceable, new_build_folder

__all__ = [
    "FORMAT_VERSION",
    "Index",
    "build_index",
    "check_replace",
    "load_index",
    "open_index",
    "read_manifest",
    "refuse_other_embeddings",
    "replaced_by",
    "save_index",
    "stale_reasons",
]

Progress = Callable[[int, int], None]
#: files of an index folder that are not the index but belong to its corpus (the answer model
#: ``ragloop calibrate`` fitted on it, its rows, a fit not put to use): a rebuild with the same
#: embedding model keeps them; with another model they no longer apply and are left behind
KEPT_ACROSS_REBUILDS = (
    "answer_model.json",
    "calibration_rows.csv.gz",
    "answer_model.candidate.json",
)


@dataclass
class Index:
    """The chunks of one corpus with their dense and sparse indexes."""

    chunks: list[Document]
    faiss: Any
    bm25: Any
    embeddings: Embeddings
    manifest: dict[str, Any] = field(default_factory=dict)
    report: LoadReport | None = None

    def chunk(self, chunk_id: str) -> Document | None:
        """The chunk with this id, if any."""
        return next((c for c in self.chunks if c.id == chunk_id), None)


def build_index(
    corpus_dir: str | Path,
    embeddings: Embeddings,
    embeddings_spec: str,
    out: str | Path | None = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    id_prefix: str = "",
    progress: Progress | None = None,
    cache: VectorCache | None = None,
    on_plan: Callable[[EmbedPlan], None] | None = None,
) -> Index:
    """Load, chunk and index a corpus; write it to ``out`` when given.

    ``cache`` reuses vectors of unchanged chunks; ``on_plan`` hears the embedding plan
    (counts and a time estimate) before embedding starts.
    """
    started = time.perf_counter()
    report = load_corpus(
        corpus_dir, chunk_size=chunk_size, chunk_overlap=chunk_overlap, id_prefix=id_prefix
    )
    store = build_faiss(report.chunks, embeddings, cache=cache, progress=progress, on_plan=on_plan)
    bm25 = build_bm25(report.chunks)
    manifest = {
        "format": FORMAT_VERSION,
        "chunker": chunker_fingerprint(),
        **manifest_fields(embeddings, embeddings_spec, int(store.index.d)),
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "id_prefix": id_prefix,
        "corpus_dir": str(Path(corpus_dir).resolve()),
        "corpus_fingerprint": report.fingerprint,
        "files": report.files,
        "chunks": len(report.chunks),
        "skipped": report.skipped,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "build_seconds": round(time.perf_counter() - started, 3),
    }
    index = Index(report.chunks, store, bm25, embeddings, manifest, report)
    if out is not None:
        save_index(index, Path(out))
    return index


def save_index(index: Index, folder: Path) -> None:
    """Write the index into a unique build folder, then swap it in under the folder's lock.

    Concurrent writers never share a folder, a reader (holding the same lock) sees the old
    index or the new one whole, and a folder that is not a ragloop index is never replaced.
    """
    folder = Path(folder)
    check_replaceable(folder, "index")
    build = new_build_folder(folder)
    try:
        (build / "faiss").mkdir()
        (build / "bm25").mkdir()
        save_faiss(index.faiss, build / "faiss")
        save_bm25(index.bm25, index.chunks, build / "bm25")
        atomic_write_text(build / "manifest.json", json.dumps(index.manifest, indent=2))
        for path in build.rglob("*"):
            if path.is_file():
                with path.open("rb+") as fh:
                    os.fsync(fh.fileno())
        with folder_lock(folder):
            _keep_calibration(folder, build, index.manifest)
            replace_folder(build, folder, "index")
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise


def _keep_calibration(folder: Path, build: Path, manifest: dict[str, Any]) -> None:
    """Copy ``KEPT_ACROSS_REBUILDS`` from the old index into the new build when both hold
    vectors of the same embedding model."""
    old = folder / "manifest.json"
    if not old.is_file():
        return
    try:
        before = json.loads(old.read_text(encoding="utf-8")).get("embeddings_model")
    except (OSError, ValueError, AttributeError):
        return
    if not before or before != manifest.get("embeddings_model"):
        return
    for name in KEPT_ACROSS_REBUILDS:
        if (folder / name).is_file() and not (folder / name).is_symlink():
            shutil.copyfile(folder / name, build / name)
            with (build / name).open("rb+") as fh:
                os.fsync(fh.fileno())


def load_index(
    folder: str | Path,
    embeddings: Embeddings,
    embeddings_spec: str,
    corpus_dir: str | Path | None = None,
) -> Index:
    """Load an index, refusing one built with other embeddings or from an outdated corpus."""
    folder = Path(folder)
    with folder_lock(folder):  # a rebuild swaps the folder only under this lock
        return _load_locked(folder, embeddings, embeddings_spec, corpus_dir)


def _load_locked(
    folder: Path, embeddings: Embeddings, embeddings_spec: str, corpus_dir: str | Path | None
) -> Index:
    manifest = read_manifest(folder)
    refuse_other_embeddings(folder, manifest, embeddings_spec, embeddings)
    reasons = stale_reasons(manifest, embeddings_spec, corpus_dir, embeddings=embeddings)
    if reasons:
        raise IndexError_(
            f"index at {folder} is stale: {'; '.join(reasons)}. Rebuild it with "
            f"`ragloop index {manifest.get('corpus_dir', 'CORPUS')} --out {folder}`"
        )
    try:
        store = load_faiss(folder / "faiss", embeddings)
        bm25, chunks = load_bm25(folder / "bm25")
    except Exception as exc:  # noqa: BLE001 - a damaged index gets a way out, not a traceback
        raise IndexError_(
            f"the index at {folder} is damaged ({type(exc).__name__}: {exc}); rebuild it with "
            f"`ragloop index {manifest.get('corpus_dir', 'PATH')} --out {folder} --force`"
        ) from None
    return Index(chunks, store, bm25, embeddings, manifest)


def open_index(
    corpus_dir: str | Path,
    folder: str | Path,
    embeddings: Embeddings,
    embeddings_spec: str,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    id_prefix: str = "",
    rebuild: Literal["auto", "never", "always"] = "auto",
    force: bool = False,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> Index:
    """Load the index for ``corpus_dir`` from ``folder``; build it when missing or outdated.

    ``rebuild="never"`` refuses a stale index instead; ``"always"`` rebuilds regardless.
    An index made by other embeddings is never rebuilt silently (that can take long and
    the user may simply have the wrong setting): it is an error unless ``"always"``. One
    built from another corpus or with other chunk settings is replaced only with ``force``.
    """
    folder = Path(folder)
    with folder_lock(folder):
        has_index = (folder / "manifest.json").is_file()
        if rebuild != "always" and has_index:
            manifest = read_manifest(folder)
            refuse_other_embeddings(folder, manifest, embeddings_spec, embeddings)
            reasons = stale_reasons(
                manifest, embeddings_spec, corpus_dir, chunk_size, chunk_overlap, embeddings
            )
            if not reasons:
                return _load_locked(folder, embeddings, embeddings_spec, None)
            if rebuild == "never":
                raise IndexError_(
                    f"index at {folder} is stale: {'; '.join(reasons)}; rebuild it with "
                    f"`ragloop index {corpus_dir} --out {folder}`"
                )
        elif rebuild == "never":
            read_manifest(folder)  # raises the "no index" error
        check_replace(
            folder,
            corpus_dir,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            id_prefix=id_prefix,
            force=force or rebuild == "always",
        )
    return build_index(  # built outside the lock; save_index takes it for the swap
        corpus_dir,
        embeddings,
        embeddings_spec,
        folder,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        id_prefix=id_prefix,
        progress=progress,
        cache=cache,
    )
