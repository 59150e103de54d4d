"""Dense retrieval: FAISS inner product on L2-normalised embeddings (langchain-community)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from pydantic import ConfigDict

from ragloop.embeddings.batching import EmbedPlan, Progress, embed_texts
from ragloop.embeddings.cache import VectorCache
from ragloop.errors import IndexError_
from ragloop.retrievers.base import ScoredRetriever
from ragloop.safety import atomic_write_text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy


class NormalizedEmbeddings(Embeddings):
    """L2-normalises another model's vectors, so FAISS inner product is cosine similarity.

    langchain-community's FAISS ignores ``normalize_L2`` for inner-product indexes, so the
    normalisation happens here, for documents and queries alike. With ``expected_dim`` set
    (the index's), a query vector of another length is a clear error, not a FAISS assert.
    """

    def __init__(self, inner: Embeddings, expected_dim: int | None = None):
        self.inner = inner
        self.expected_dim = expected_dim

    @staticmethod
    def _unit(vectors: Any) -> list[list[float]]:
        arr = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return (arr / np.where(norms == 0, 1.0, norms)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._unit(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        vec = self._unit([self.inner.embed_query(text)])[0]
        if self.expected_dim is not None and len(vec) != self.expected_dim:
            raise IndexError_(
                f"these embeddings give {len(vec)}-d vectors but the index holds "
                f"{self.expected_dim}-d ones: query it with the embeddings it was built with, "
                f"or rebuild it with `ragloop index PATH --out INDEX --embeddings SPEC --force`"
            )
        return vec


def embedding_text(chunk: Document) -> str:
    """What is embedded for a chunk: its document title, then its text.

    A later chunk of a document loses the title line, and with it what the section is
    about; putting the title back helps dense retrieval find such chunks.
    """
    return titled_text(str(chunk.metadata.get("title") or ""), chunk.page_content)


def titled_text(title: str, text: str) -> str:
    """``embedding_text`` of a chunk with this title and text (no ``Document`` needed)."""
    return text if not title or text.lstrip("# ").startswith(title) else f"{title}\n{text}"


def build_faiss(
    chunks: list[Document],
    embeddings: Embeddings,
    *,
    cache: VectorCache | None = None,
    progress: Progress | None = None,
    on_plan: Callable[[EmbedPlan], None] | None = None,
) -> FAISS:
    """Embed chunks in batches (cached vectors reused) and index them by cosine similarity."""
    texts = [c.page_content for c in chunks]
    raw = embed_texts(
        embeddings,
        [embedding_text(c) for c in chunks],
        cache=cache,
        progress=progress,
        on_plan=on_plan,
    )
    vectors = NormalizedEmbeddings._unit(raw) if len(raw) else []
    dim = len(vectors[0]) if vectors else None
    return FAISS.from_embeddings(
        list(zip(texts, vectors, strict=True)),
        NormalizedEmbeddings(embeddings, dim),
        metadatas=[c.metadata for c in chunks],
        ids=[str(c.id) for c in chunks],
        distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
    )


#: the files of a dense index: FAISS's own binary index and a JSON docstore (no pickle)
FAISS_FILE = "index.faiss"
DOCSTORE_FILE = "docstore.json"


def save_faiss(store: FAISS, folder: Path) -> None:
    """Write the FAISS index (its own format) and the docstore (JSON) under ``folder``.

    LangChain's ``save_local`` pickles the docstore, and reading a pickle runs whatever
    code it names; an index folder is data users copy and download, so nothing in it may.
    """
    folder.mkdir(parents=True, exist_ok=True)
    faiss.write_index(store.index, str(folder / FAISS_FILE))
    rows = []
    for pos in range(len(store.index_to_docstore_id)):
        doc_id = store.index_to_docstore_id[pos]
        doc = store.docstore.search(doc_id)
        if isinstance(doc, str):  # the docstore's "not found" message, never a document
            raise RuntimeError(f"the dense index lost chunk {doc_id}: {doc}; rebuild the index")
        rows.append({"id": doc_id, "text": doc.page_content, "metadata": doc.metadata})
    atomic_write_text(folder / DOCSTORE_FILE, json.dumps(rows, ensure_ascii=False))


def load_faiss(folder: Path, embeddings: Embeddings) -> FAISS:
    """Read what ``save_faiss`` wrote; a pickled docstore of an older version is refused.

    Nothing here unpickles: FAISS reads its own binary format, the docstore is JSON.
    """
    if not (folder / DOCSTORE_FILE).is_file():
        legacy = " (it holds a pickled docstore, index.pkl, which is never read)"
        raise IndexError_(
            f"the dense index at {folder} was written by an older ragloop"
            f"{legacy if (folder / 'index.pkl').exists() else ''}: rebuild the index with "
            "`ragloop index PATH --out INDEX --force`"
        )
    index = faiss.read_index(str(folder / FAISS_FILE))
    rows = json.loads((folder / DOCSTORE_FILE).read_text(encoding="utf-8"))
    if not isinstance(rows, list) or len(rows) != index.ntotal:
        raise IndexError_(f"{folder / DOCSTORE_FILE} does not match {FAISS_FILE}: rebuild it")
    docs = {
        str(r["id"]): Document(id=str(r["id"]), page_content=r["text"], metadata=r["metadata"])
        for r in rows
    }
    return FAISS(
        NormalizedEmbeddings(embeddings, int(index.d)),
        index,
        InMemoryDocstore(docs),
        {pos: str(r["id"]) for pos, r in enumerate(rows)},
        distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
    )


class DenseRetriever(ScoredRetriever):
    """Cosine-similarity retrieval over a FAISS store."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    store: Any
    name: str = "dense"

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        k = k or self.k
        return [
            (doc, float(score))
            for doc, score in self.store.similarity_search_with_score(query, k=k)
        ]
