"""Embedding similarity: SemanticSimilarity (RAGAS) and the blended helpers offline metrics use."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.errors import ConfigError
from ragloop.eval.metrics._aggregate import cosine
from ragloop.eval.metrics.base import MetricResult, SingleTurnMetric, nan
from ragloop.eval.schema import SingleTurnSample
from ragloop.text import tokenize


@functools.cache
def _porter() -> Any:
    from nltk.stem.porter import PorterStemmer  # ships with rouge-score; needs no data files

    return PorterStemmer()


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _porter().stem(word) if word.isascii() else word


def _stems(text: str) -> list[str]:
    """Porter stems of the content words (non-ASCII words kept as they are)."""
    return [_stem(t) for t in tokenize(text, drop_stopwords=True)]


def lexical_overlap(needle: str, haystack: str) -> float | None:
    """Share of needle's content stems found in haystack; None when needle has none.

    Compounds match split words both ways ("super bowl" and "superbowl").
    """
    want = _stems(needle)
    if not want:
        return None
    got = _stems(haystack)
    have = set(got) | {a + b for a, b in zip(got, got[1:], strict=False)}
    hit = [w in have for w in want]
    for i in range(len(want) - 1):
        if want[i] + want[i + 1] in have:
            hit[i] = hit[i + 1] = True
    return sum(hit) / len(hit)


def blend(cos: float, lex: float | None, weight: float) -> float:
    """``weight * cos + (1 - weight) * lex``; the cosine alone when ``lex`` is None."""
    return cos if lex is None else weight * cos + (1.0 - weight) * lex


async def unit_vectors(embeddings: Embeddings, texts: list[str]) -> np.ndarray:
    """Embed ``texts`` in one call; rows L2-normalised (a zero row stays zero)."""
    m = np.nan_to_num(np.asarray(await embeddings.aembed_documents(texts), dtype=float))
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


async def blended_similarities(
    emb: Embeddings, needle: str, texts: list[str], weight: float
) -> list[float]:
    """Blended similarity of ``needle`` (the question) to each of ``texts``, one embed call."""
    if not texts:
        return []
    vecs = await unit_vectors(emb, [needle, *texts])
    lex = [lexical_overlap(needle, t) for t in texts]
    return [blend(float(vecs[0] @ v), x, weight) for v, x in zip(vecs[1:], lex, strict=True)]


class SemanticSimilarity(SingleTurnMetric):
    """Cosine similarity of ``response`` and ``reference`` embeddings, range [-1, 1].

    With ``threshold`` set the result is binary: 1.0 when the cosine reaches it, else 0.0.
    A text whose embedding is the zero vector cannot be compared and scores NaN.
    """

    name = "semantic_similarity"
    required_columns: ClassVar[tuple[str, ...]] = ("response", "reference")
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    needs_embeddings = True
    threshold: float | None = None

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        if self.threshold is not None and not -1.0 <= float(self.threshold) <= 1.0:
            raise ConfigError(f"threshold must be within [-1, 1] or None; got {self.threshold!r}")

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        assert self.embeddings is not None  # checked in Metric.__init__
        response, reference = str(sample.response), str(sample.reference)
        vectors = await self.embeddings.aembed_documents([response, reference])
        for column, vec in zip(("response", "reference"), vectors, strict=True):
            if not np.any(np.asarray(vec, dtype=float)):
                return nan(f"{column} embeds to the zero vector (no words the model knows)")
        similarity = cosine(vectors[0], vectors[1])
        details = {"cosine": similarity}
        if self.threshold is None:
            return MetricResult(similarity, details=details)
        passed = similarity >= self.threshold
        reason = f"cosine {similarity:.3f} {'>=' if passed else '<'} threshold {self.threshold}"
        return MetricResult(float(passed), reason=reason, details=details)
