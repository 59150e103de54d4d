"""What nodes are handed by the builder: strategies, retrievers, web search."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.documents import Document

from ragloop.eval.metrics.base import MetricResult
from ragloop.retrievers.adapters import stable_chunk_id
from ragloop.state import ContextItem


@dataclass
class Draft:
    """A closed-book answer and whether the model itself thinks retrieval is needed."""

    text: str
    source: str  # "llm" | "cache" | "none"
    noncommittal: bool
    needs_retrieval: bool | None = None  # None: the strategy has no opinion
    #: why there is no draft although one was asked for (an unusable LLM reply), else None
    fallback: str | None = None


class Rewrite(str):
    """A rewritten query; ``fallback`` says why it came from a fallback (an unusable LLM reply).

    A ``str``, so strategies that return a plain string still fit.
    """

    fallback: str | None = None

    @classmethod
    def by_fallback(cls, query: str, why: str) -> Rewrite:
        out = cls(query)
        out.fallback = why
        return out


@dataclass
class Assessment:
    """The judge's grades for new candidates and which claims the kept contexts support."""

    grades: list[int]
    supported: list[bool]
    #: graded service-mode recall (best evidence in hand), when the judge measures one
    recall: float | None = None
    #: one number per candidate on one scale (ranks kept contexts), when the judge has one
    evidence: list[float] | None = None
    #: what the retrieval showed, for the policy: names/terms/meaning matched (0..1 each)
    signals: dict[str, float] = field(default_factory=dict)
    #: why these grades came from a fallback judge (an unusable LLM reply), None when not
    fallback: str | None = None


class Strategies(Protocol):
    """The LLM steps of the graph; an LLM implementation and an offline one exist."""

    name: str

    async def draft(self, question: str, prompt: str | None = None) -> Draft: ...

    async def claims(self, question: str, draft: Draft) -> list[str]: ...

    async def assess(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        """Grade candidates 0/1/2; say which claims kept + newly kept (grade >= keep) support."""
        ...

    async def rewrite(
        self, question: str, query: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> str: ...

    async def answer(
        self, question: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> tuple[str, list[int]]: ...

    async def answer_relevancy(self, question: str, answer: str) -> MetricResult: ...

    async def draft_relevancy(self, question: str, draft: str) -> MetricResult:
        """A cheap relevancy of the draft for decide (no LLM call)."""
        ...

    async def second_response(self, answer: str, reference: str) -> float: ...


@dataclass
class Deps:
    """Everything the nodes use, built once by the caller (tests hand in fakes)."""

    strategies: Strategies
    retrievers: Mapping[str, Any]
    web: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
    #: the context of a run whose caller sent none (a server's RAGLOOP_* settings)
    context: Any = None

    def available_retrievers(self, order: tuple[str, ...]) -> list[str]:
        """The configured retriever order; a name no retriever answers to is a clear error."""
        unknown = [name for name in order if name not in self.retrievers]
        if unknown:
            from ragloop.errors import unknown_name

            raise unknown_name("retriever", unknown[0], list(self.retrievers))
        return list(order)


def to_item(doc: Document, origin: str = "kb") -> ContextItem:
    """A LangChain document as a context item of the state."""
    meta = doc.metadata
    return ContextItem(
        id=str(doc.id or meta.get("id") or stable_chunk_id(doc)),
        text=doc.page_content,
        source=str(meta.get("source", "")),
        title=str(meta.get("title", "")),
        **({"page": meta["page"]} if isinstance(meta.get("page"), int) else {}),
        retriever=str(meta.get("retriever", "")),
        origin=str(meta.get("origin", origin)),
        score=float(meta.get("score", 0.0)),
        **({"boilerplate": True} if meta.get("boilerplate") else {}),
    )


async def search(retriever: Any, query: str, k: int) -> list[Document]:
    """Run any retriever: ragloop's scored ones with ``k``, else LangChain's ``ainvoke``.

    A raw ``VectorStore`` or ``BaseRetriever`` handed in by a caller is adapted first: a
    store's own ``asearch(query, search_type)`` must never receive ``k``.
    """
    from ragloop.retrievers.adapters import adapt

    retriever = adapt(retriever, getattr(retriever, "name", None) or "retriever", k)
    if hasattr(retriever, "search") and not hasattr(retriever, "asearch"):
        from ragloop.retrievers.base import with_score

        pairs = await asyncio.to_thread(retriever.search, query, k)
        return [with_score(d, s, getattr(retriever, "name", "")) for d, s in pairs]
    if hasattr(retriever, "asearch"):
        return list(await retriever.asearch(query, k))
    return list(await retriever.ainvoke(query))[:k]
