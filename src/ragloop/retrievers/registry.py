"""Retrievers by name: each factory turns an Index into a LangChain BaseRetriever."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragloop.errors import unknown_name
from ragloop.retrievers.base import ScoredRetriever
from ragloop.retrievers.dense import DenseRetriever
from ragloop.retrievers.hybrid import HybridRetriever
from ragloop.retrievers.index import Index
from ragloop.retrievers.sparse import SparseRetriever

Factory = Callable[..., ScoredRetriever]
_FACTORIES: dict[str, Factory] = {}


def register_retriever(name: str) -> Callable[[Factory], Factory]:
    """Decorator: make ``factory(index, k=..., **options)`` available under ``name``."""

    def deco(factory: Factory) -> Factory:
        _FACTORIES[name] = factory
        return factory

    return deco


def retriever_names() -> list[str]:
    """Every registered retriever name."""
    return sorted(_FACTORIES)


def get_retriever(name: str, index: Index, k: int = 5, **options: Any) -> ScoredRetriever:
    """Build the retriever ``name`` over ``index``; an unknown name lists the known ones."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise unknown_name("retriever", name, list(_FACTORIES)) from None
    return factory(index, k=k, **options)


@register_retriever("dense")
def _dense(index: Index, k: int = 5) -> ScoredRetriever:
    return DenseRetriever(store=index.faiss, k=k)


@register_retriever("sparse")
def _sparse(index: Index, k: int = 5) -> ScoredRetriever:
    return SparseRetriever(model=index.bm25, chunks=index.chunks, k=k)


@register_retriever("hybrid")
def _hybrid(
    index: Index, k: int = 5, weights: tuple[float, float] = (1.0, 1.0), fetch_k: int = 20
) -> ScoredRetriever:
    return HybridRetriever(
        dense=_dense(index, k=max(k, fetch_k)),
        sparse=_sparse(index, k=max(k, fetch_k)),
        weights=weights,
        fetch_k=fetch_k,
        k=k,
    )
