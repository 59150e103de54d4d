"""Any LangChain retriever or vector store as a ragloop retriever, with ids that never collapse.

ragloop's nodes call ``asearch(query, k)`` and expect scored documents with a chunk id. A
``VectorStore`` has an ``asearch(query, search_type)`` of its own, so it is never called
directly: it is wrapped here, as is any other ``BaseRetriever``.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import VectorStore
from pydantic import ConfigDict

from ragloop.errors import ProviderError
from ragloop.retrievers.base import DEFAULT_K, ScoredRetriever, with_score

#: metadata keys that place a chunk inside its source, most precise first
_POSITION_KEYS = ("start_index", "chunk_index", "chunk", "seq_num", "page", "row")
_SOURCE_KEYS = ("source", "file_path", "path", "url", "title")


def stable_chunk_id(doc: Document) -> str:
    """An id from the chunk's source and position (else a digest of its text), stable across runs.

    Stores such as Qdrant or ``InMemoryVectorStore`` may hand back ``id=None``; using the
    source alone would make every chunk of one file the same chunk.
    """
    meta = doc.metadata or {}
    source = next((str(meta[k]) for k in _SOURCE_KEYS if meta.get(k) not in (None, "")), "")
    position = [f"{k}={meta[k]}" for k in _POSITION_KEYS if meta.get(k) not in (None, "")]
    if not position or position == [f"page={meta.get('page')}"]:  # a page holds many chunks
        position.append(hashlib.sha1(doc.page_content.encode("utf-8")).hexdigest()[:12])
    return f"{source or 'chunk'}#{':'.join(position)}"


def with_id(doc: Document) -> Document:
    """``doc`` with an id: its own, its metadata's, or a stable one from source + position."""
    if doc.id or (doc.metadata or {}).get("id"):
        return doc
    return Document(id=stable_chunk_id(doc), page_content=doc.page_content, metadata=doc.metadata)


def _ranked(docs: list[Document], k: int) -> list[tuple[Document, float]]:
    """Documents without scores, best first: their own metadata score or 1 / rank."""
    pairs = []
    for rank, doc in enumerate(docs[:k], start=1):
        score = (doc.metadata or {}).get("score")
        pairs.append((with_id(doc), float(score) if score is not None else 1.0 / rank))
    return pairs


class VectorStoreRetriever(ScoredRetriever):
    """A LangChain ``VectorStore`` searched by similarity, scores as the store gives them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    store: VectorStore

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        k = k or self.k
        try:
            pairs = self.store.similarity_search_with_score(query, k=k)
        except NotImplementedError:
            return _ranked(self.store.similarity_search(query, k=k), k)
        return [(with_id(d), float(s)) for d, s in pairs]

    async def asearch(self, query: str, k: int | None = None) -> list[Document]:
        k = k or self.k
        try:
            pairs = await self.store.asimilarity_search_with_score(self._check(query), k=k)
        except NotImplementedError:
            pairs = _ranked(await self.store.asimilarity_search(query, k=k), k)
        return [with_score(with_id(d), s, self.name) for d, s in pairs]


class LangChainRetriever(ScoredRetriever):
    """Any other LangChain ``BaseRetriever``; its own ranking is kept, cut to ``k``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    inner: BaseRetriever
    calls_llm: ClassVar[bool] = True  # a caller's retriever may query a chat model

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        return _ranked(list(self.inner.invoke(query)), k or self.k)

    async def asearch(self, query: str, k: int | None = None) -> list[Document]:
        docs = list(await self.inner.ainvoke(self._check(query)))
        return [with_score(d, s, self.name) for d, s in _ranked(docs, k or self.k)]


def adapt(obj: Any, name: str, k: int = DEFAULT_K) -> Any:
    """``obj`` as something the graph can search: ragloop's own, a VectorStore, a BaseRetriever."""
    if isinstance(obj, ScoredRetriever):
        return obj
    if isinstance(obj, VectorStore):
        return VectorStoreRetriever(store=obj, name=name, k=k)
    if isinstance(obj, BaseRetriever):
        return LangChainRetriever(inner=obj, name=name, k=k)
    if callable(getattr(obj, "asearch", None)):  # ragloop's protocol: asearch(query, k)
        return obj
    raise ProviderError(
        f"retriever '{name}' is a {type(obj).__name__}: register a LangChain BaseRetriever, a "
        "VectorStore, or a factory(index, k=...) returning one"
    )
