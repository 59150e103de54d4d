"""Embeddings that remember: one question's judge, answer and score embed each text once.

The judge, the extractive answer and the offline answer relevancy all embed the question and
the same sentences; with a transformer encoder that work is most of a run's latency. A
bounded memo keyed by text serves the repeats, and chunk vectors already stored in the dense
index are read back instead of being embedded again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import Embeddings

Lookup = Callable[[str], "list[float] | None"]


class MemoEmbeddings(Embeddings):
    """Wraps a model; ``known`` may supply stored vectors (e.g. the dense index's) by text."""

    def __init__(self, inner: Embeddings, known: Lookup | None = None, size: int = 50_000):
        self.inner = inner
        self.known = known
        self.size = size
        self._docs: OrderedDict[str, list[float]] = OrderedDict()
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        self.embedded = 0  # texts the inner model actually embedded (for benches and tests)

    def clear(self) -> None:
        """Forget every remembered vector, the wrapped model's own too (for cold timings)."""
        self._docs.clear()
        self._queries.clear()
        inner_clear = getattr(self.inner, "clear_memo", None)
        if callable(inner_clear):
            inner_clear()

    @staticmethod
    def _put(memo: OrderedDict[str, list[float]], key: str, vec: list[float], size: int) -> None:
        memo[key] = vec
        memo.move_to_end(key)
        while len(memo) > size:
            memo.popitem(last=False)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: dict[int, list[float]] = {}
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            vec = self._docs.get(text)
            if vec is None and self.known is not None:
                vec = self.known(text)
                if vec is not None:
                    self._put(self._docs, text, vec, self.size)
            if vec is None:
                missing.setdefault(text, []).append(i)
            else:
                out[i] = vec
        if missing:
            fresh = self.inner.embed_documents(list(missing))
            self.embedded += len(missing)
            for text, vec in zip(missing, fresh, strict=True):
                self._put(self._docs, text, list(vec), self.size)
                for i in missing[text]:
                    out[i] = list(vec)
        return [out[i] for i in range(len(texts))]

    def embed_query(self, text: str) -> list[float]:
        vec = self._queries.get(text)
        if vec is None:
            vec = list(self.inner.embed_query(text))
            self.embedded += 1
            self._put(self._queries, text, vec, self.size)
        return vec

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if all(t in self._docs for t in texts):
            return [self._docs[t] for t in texts]
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        if text in self._queries:
            return self._queries[text]
        return await asyncio.to_thread(self.embed_query, text)


def index_vectors(index: Any) -> Lookup:
    """Read chunk vectors back from an index's FAISS store, keyed by the text that was embedded.

    The dense index embeds ``embedding_text(chunk)`` (title, newline, text); the judge grades
    that same string, so its vector costs nothing. Unknown texts give None.
    """
    from ragloop.retrievers.dense import embedding_text  # loads faiss: only with an index

    table: dict[str, int] = {}

    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def lookup(text: str) -> list[float] | None:
        store = index.faiss
        if not table:
            position = {doc_id: pos for pos, doc_id in store.index_to_docstore_id.items()}
            for chunk in index.chunks:
                pos = position.get(str(chunk.id))
                if pos is not None:
                    table[key(embedding_text(chunk))] = pos
        pos = table.get(key(text))
        return None if pos is None else [float(x) for x in store.index.reconstruct(int(pos))]

    return lookup
