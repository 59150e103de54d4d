"""Retrievers by name: ragloop's own, any LangChain ``BaseRetriever`` or ``VectorStore``.

An entry is a retriever or vector store instance, or a factory ``factory(index, k=...,
**options)`` returning one; packages add entries through the ``ragloop.retrievers`` entry
point group. Whatever the entry gives is adapted (``retrievers/adapters.py``) so the graph can
search it and its chunks keep distinct ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import VectorStore

from ragloop.errors import ProviderError
from ragloop.plugins.registry import Registry, decorator_or_call
from ragloop.retrievers.adapters import adapt
from ragloop.retrievers.base import DEFAULT_K

#: the built-in retrievers over ragloop's own index, in their default order
BUILTIN_RETRIEVERS = ("dense", "sparse", "hybrid")
RETRIEVERS: Registry[Any] = Registry("retriever", "ragloop.retrievers")


def register_retriever(name: str, retriever: Any = None) -> Any:
    """Make a retriever selectable as ``name`` in settings, the CLI, specs and server contexts.

    ``retriever`` is a ``BaseRetriever``, a ``VectorStore``, or a factory called as
    ``factory(index, k=..., **options)``; without it this is a decorator for the factory.
    """
    return decorator_or_call(RETRIEVERS, name, retriever)


def unregister_retriever(name: str) -> None:
    """Forget a retriever registered from Python."""
    RETRIEVERS.unregister(name)


def retriever_names() -> list[str]:
    """Every registered retriever name (built-in, Python and entry points)."""
    return RETRIEVERS.names()


def get_retriever(name: str, index: Any, k: int = DEFAULT_K, **options: Any) -> Any:
    """Build the retriever ``name`` over ``index``; an unknown name lists the known ones."""
    entry = RETRIEVERS.get(name)
    if isinstance(entry, BaseRetriever | VectorStore):
        obj = entry
    elif callable(entry):
        try:
            obj = entry(index, k=k, **options)
        except TypeError as exc:
            raise ProviderError(
                f"retriever factory '{name}' must accept (index, k=...): {exc}"
            ) from exc
    else:
        obj = entry
    return adapt(obj, name, k)


class LazyRetrievers(Mapping[str, Any]):
    """Every registered retriever over one index, built the first time a run names it."""

    def __init__(self, index: Any, k: int = DEFAULT_K, eager: tuple[str, ...] = ()):
        self.index = index
        self.k = k
        self._built: dict[str, Any] = {}
        for name in eager:  # configured ones are built up front so errors show before a run
            self[name]

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in RETRIEVERS:
                raise KeyError(name)
            self._built[name] = get_retriever(name, self.index, k=self.k)
        return self._built[name]

    def calls_llm(self, name: str) -> bool:
        """Whether the retriever ``name`` may call a chat model, without building it: a built
        one as it declares, one not built yet unless it is one of ragloop's own."""
        if name in self._built:
            return bool(getattr(self._built[name], "calls_llm", True))
        return name not in BUILTIN_RETRIEVERS

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in RETRIEVERS

    def __iter__(self) -> Iterator[str]:
        return iter(retriever_names())

    def __len__(self) -> int:
        return len(retriever_names())


@register_retriever("dense")
def _dense(index: Any, k: int = DEFAULT_K) -> Any:
    from ragloop.retrievers.dense import DenseRetriever

    return DenseRetriever(store=index.faiss, k=k)


@register_retriever("sparse")
def _sparse(index: Any, k: int = DEFAULT_K) -> Any:
    from ragloop.retrievers.sparse import SparseRetriever

    return SparseRetriever(model=index.bm25, chunks=index.chunks, k=k)


@register_retriever("hybrid")
def _hybrid(
    index: Any, k: int = DEFAULT_K, weights: tuple[float, float] = (1.0, 1.0), fetch_k: int = 20
) -> Any:
    from ragloop.retrievers.hybrid import HybridRetriever

    return HybridRetriever(
        dense=_dense(index, k=max(k, fetch_k)),
        sparse=_sparse(index, k=max(k, fetch_k)),
        weights=weights,
        fetch_k=fetch_k,
        k=k,
    )


def check_retriever_names(value: Any) -> list[str]:
    """Retriever names from a list or a comma-separated string, each registered, none twice."""
    names = [s.strip() for s in value.split(",")] if isinstance(value, str) else list(value)
    names = [str(n).strip() for n in names if str(n).strip()]
    known = retriever_names()
    if not names:
        raise ValueError("retrievers must name at least one of " + ", ".join(known))
    for n in names:
        if n not in known:
            raise ValueError(f"unknown retriever '{n}'; known retrievers: {', '.join(known)}")
    if len(set(names)) != len(names):
        raise ValueError("retrievers must not repeat a name")
    return names
