"""Hybrid retrieval: reciprocal rank fusion of dense and sparse rankings."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from ragloop.retrievers.base import ScoredRetriever

RRF_K = 60


def rrf_fuse(
    rankings: Sequence[Sequence[Document]],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> list[tuple[Document, float]]:
    """Fuse rankings: score(d) = sum_r w_r / (k + rank_r(d)), ranks from 1.

    A document found by several rankings (same chunk id) is merged and its terms summed.
    Ties keep the order of first appearance.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("give one weight per ranking")
    scores: dict[str, float] = {}
    docs: dict[str, Document] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            key = doc.id or doc.metadata.get("id") or doc.page_content
            docs.setdefault(key, doc)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = sorted(scores, key=lambda key: -scores[key])  # sorted() is stable
    return [(docs[key], scores[key]) for key in order]


class HybridRetriever(ScoredRetriever):
    """Dense + sparse through RRF (k=60); weights default to equal."""

    dense: ScoredRetriever
    sparse: ScoredRetriever
    weights: tuple[float, float] = (1.0, 1.0)
    fetch_k: int = 20
    name: str = "hybrid"

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        k = k or self.k
        depth = max(self.fetch_k, k)
        dense = [d for d, _ in self.dense.search(query, depth)]
        sparse = [d for d, _ in self.sparse.search(query, depth)]
        return rrf_fuse([dense, sparse], self.weights)[:k]
