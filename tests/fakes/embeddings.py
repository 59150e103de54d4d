"""Deterministic embeddings for tests: hashed bag of words, L2-normalised."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from langchain_core.embeddings import Embeddings

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbeddings(Embeddings):
    """Each lowercase word hashes to a fixed random unit vector; a text is their normalised sum.

    Texts sharing words get a positive cosine; identical texts get exactly 1.0; an empty
    text maps to the zero vector. ``table`` pins exact vectors for given texts so formula
    tests can compute cosines by hand.
    """

    def __init__(self, dim: int = 64, table: dict[str, list[float]] | None = None):
        self.dim = dim
        self.table = dict(table or {})
        self.calls = 0

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        vec = np.random.default_rng(seed).standard_normal(self.dim)
        return vec / np.linalg.norm(vec)

    def _embed(self, text: str) -> list[float]:
        if text in self.table:
            return list(self.table[text])
        vec = np.zeros(self.dim)
        for word in _WORD.findall(text.lower()):
            vec += self._word(word)
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else vec).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self._embed(text)
