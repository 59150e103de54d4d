"""Embedding similarity: SemanticSimilarity (RAGAS) and the blended helpers offline metrics use."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.errors import ConfigError
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
    return _overlap(_stems(needle), haystack)


def _overlap(want: list[str], haystack: str) -> float | None:
    """``lexical_overlap`` with the needle's stems given (read once for many haystacks)."""
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
    want = _stems(needle)
    lex = [_overlap(want, t) for t in texts]
    return [blend(float(vecs[0] @ v), x, weight) for v, x in zip(vecs[1:], lex, strict=True)]


def ragas_cosine(a: Any, b: Any) -> float:
    """Cosine as RAGAS computes it: NaN (not 0) when either vector is zero."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    if nx == 0 or ny == 0:
        return float("nan")
    return float(np.clip(x @ y / (nx * ny), -1.0, 1.0))  # rounding can pass 1 by 2e-16


class SemanticSimilarity(SingleTurnMetric):
    """RAGAS ``semantic_similarity``: cosine of the response and reference embeddings.

    As in RAGAS an empty text is embedded as " "; a zero embedding gives NaN; a
    ``threshold`` makes the result binary (1.0 when the cosine reaches it), and a
    threshold of 0 or None means no threshold. With a threshold an unmeasurable pair
    scores 0.0, as RAGAS does (NaN >= t is false). Range [-1, 1].
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
        reference, response = sample.reference or " ", sample.response or " "
        v_ref = await self.embeddings.aembed_query(reference)
        v_resp = await self.embeddings.aembed_query(response)
        similarity = ragas_cosine(v_ref, v_resp)
        details = {"cosine": similarity}
        if not self.threshold:
            if np.isnan(similarity):
                return nan("response or reference embeds to the zero vector", **details)
            return MetricResult(similarity, details=details)
        passed = bool(similarity >= self.threshold)
        reason = f"cosine {similarity:.3f} {'>=' if passed else '<'} threshold {self.threshold}"
        return MetricResult(float(passed), reason=reason, details=details)
