"""The semantic answer cache: earlier answers that scored well, looked up by question meaning."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.data import ANSWER_CACHE_PATH, KB_DIR
from ragloop.retrievers.corpus import fingerprint

#: WordLlama cosine above which two questions count as the same: set on the demo set between
#: paraphrased general questions and their cached twins (above) and every other question
#: against any cached one (below)
DEFAULT_THRESHOLD = 0.5
#: the same split per embedding model (MiniLM's cosines sit higher)
THRESHOLDS = {"wordllama": 0.5, "minilm": 0.6}


def threshold_for(embeddings: Embeddings) -> float:
    """The cache threshold calibrated for these embeddings (the WordLlama one otherwise)."""
    spec = str(
        getattr(embeddings, "spec", "") or getattr(getattr(embeddings, "inner", None), "spec", "")
    )
    return THRESHOLDS.get(spec, DEFAULT_THRESHOLD)


class AnswerCache:
    """Question/answer pairs; a lookup gives the answer whose question is nearest in meaning."""

    def __init__(self, embeddings: Embeddings, threshold: float = DEFAULT_THRESHOLD):
        self.embeddings = embeddings
        self.threshold = threshold
        self.questions: list[str] = []
        self.answers: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    @classmethod
    def from_jsonl(
        cls, path: str | Path, embeddings: Embeddings, threshold: float = DEFAULT_THRESHOLD
    ) -> AnswerCache:
        """Load ``{"question", "answer"}`` rows (a missing file gives an empty cache)."""
        cache = cls(embeddings, threshold)
        path = Path(path)
        if path.is_file():
            rows = [
                json.loads(line)
                for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]
            cache.add_many([(r["question"], r["answer"]) for r in rows])
        return cache

    def add_many(self, pairs: list[tuple[str, str]]) -> None:
        """Add question/answer pairs (embedded in one batch)."""
        if not pairs:
            return
        vecs = np.asarray(self.embeddings.embed_documents([q for q, _ in pairs]), dtype=np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        self._matrix = vecs if self._matrix.size == 0 else np.vstack([self._matrix, vecs])
        self.questions += [q for q, _ in pairs]
        self.answers += [a for _, a in pairs]

    def lookup(self, question: str) -> tuple[str, str, float] | None:
        """(cached question, answer, similarity) of the nearest entry above the threshold."""
        if not self.questions:
            return None
        q = np.asarray(self.embeddings.embed_query(question), dtype=np.float32)
        norm = np.linalg.norm(q)
        if norm == 0:
            return None
        sims = self._matrix @ (q / norm)
        best = int(np.argmax(sims))
        if sims[best] < self.threshold:
            return None
        return self.questions[best], self.answers[best], float(sims[best])


def is_demo_index(index: Any) -> bool:
    """True when the index was built from the bundled demo base (same corpus fingerprint).

    The fingerprint hashes every file, so a copy of the demo folder counts and an edited or
    different corpus does not.
    """
    built = (getattr(index, "manifest", None) or {}).get("corpus_fingerprint")
    return bool(built) and built == _demo_fingerprint(KB_DIR, fingerprint)


@functools.cache
def _demo_fingerprint(folder: Path, digest: Any) -> str:
    return str(digest(folder))


def demo_cache_for(index: Any, embeddings: Embeddings) -> AnswerCache | None:
    """The bundled answer cache, for the demo base only (its answers are demo trivia)."""
    if not is_demo_index(index):
        return None
    return AnswerCache.from_jsonl(ANSWER_CACHE_PATH, embeddings, threshold_for(embeddings))
