"""What nodes are handed by the builder: the roles (drafter, judge, rewriter, answerer, scorer),
retrievers, web search."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.documents import Document

from ragloop.errors import ConfigError, unknown_name
from ragloop.eval.metrics import DEFAULT_TEMPERATURE
from ragloop.eval.metrics.base import MetricResult
from ragloop.retrievers.adapters import adapt, stable_chunk_id
from ragloop.retrievers.base import with_score
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


class Answer(str):
    """An answer's text; ``not_found`` says the answerer found nothing that answers it.

    A ``str``, so answerers that return a plain string still fit (found, by default).
    """

    not_found: bool = False
    #: the id of the LLM message the answer came from: the streamed tokens carry it, and the
    #: answer's message in the thread takes it, so a chat UI merges the two
    message_id: str | None = None
    #: why the reply was cut short (the reply cap), else None
    cut: str | None = None
    #: why the answerer said "not found" (its support against its level, the question's names
    #: the corpus never mentions), for the path; None when it gives no reason
    why: str | None = None

    @classmethod
    def from_reply(cls, text: str, message_id: str | None, cut: str | None = None) -> Answer:
        out = cls(text)
        out.message_id, out.cut = message_id, cut
        return out

    @classmethod
    def saying_not_found(cls, text: str, why: str | None = None) -> Answer:
        out = cls(text)
        out.not_found = True
        out.why = why
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


class Drafter(Protocol):
    """Writes the closed-book draft and the claims a service-mode judge checks."""

    async def draft(self, question: str, prompt: str | None = None) -> Draft: ...

    async def claims(self, question: str, draft: Draft) -> list[str]: ...


class Judge(Protocol):
    """Grades retrieved chunks (0/1/2 with evidence and the policy's signals)."""

    async def assess(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        """Grade candidates 0/1/2; say which claims kept + newly kept (grade >= keep) support."""
        ...

    async def second_response(self, answer: str, reference: str) -> float:
        """How well an intermediate answer matches the reference (development mode)."""
        ...


class Rewriter(Protocol):
    """Rewrites the search query from what was read so far."""

    async def rewrite(
        self, question: str, query: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> str: ...


class Answerer(Protocol):
    """Answers from the contexts it is handed, citing them as [n]."""

    async def answer(
        self, question: str, contexts: list[ContextItem], prompt: str | None = None
    ) -> tuple[str, list[int]]: ...


class Scorer(Protocol):
    """Answer relevancy of the final answer, and a cheap one of the draft for ``decide``."""

    async def answer_relevancy(
        self, question: str, answer: str, temperature: float = DEFAULT_TEMPERATURE
    ) -> MetricResult: ...

    async def draft_relevancy(
        self, question: str, draft: str, temperature: float = DEFAULT_TEMPERATURE
    ) -> MetricResult:
        """A cheap relevancy of the draft for decide (no LLM call)."""
        ...


#: the role fields of ``Deps``, each filled from ``strategies`` when not given
ROLES = ("drafter", "judge", "rewriter", "answerer", "scorer")


@dataclass
class Deps:
    """Everything the nodes use, built once by the caller (tests hand in fakes).

    Each role (drafter, judge, rewriter, answerer, scorer) is its own object, so an LLM judge
    can sit beside the extractive answer; ``strategies`` is a shorthand for one object that
    plays every role not given (``OfflineStrategies``, ``LLMStrategies``).
    """

    strategies: Any = None
    retrievers: Mapping[str, Any] = field(default_factory=dict)
    web: Any = None
    drafter: Drafter = None  # type: ignore[assignment]
    judge: Judge = None  # type: ignore[assignment]
    rewriter: Rewriter = None  # type: ignore[assignment]
    answerer: Answerer = None  # type: ignore[assignment]
    scorer: Scorer = None  # type: ignore[assignment]
    #: the corpus's own words (in many chunks): no names when the answer orders what it reads
    common_words: frozenset[str] = frozenset()
    #: turns a follow-up into a standalone question (None: the offline heuristic)
    condenser: Any = None
    #: where each chunk's section starts (``retrievers.sections.SectionStarts``), when known
    section_starts: Any = None
    #: the longest question a turn accepts, in characters (None: the node's default)
    max_question_chars: int | None = None
    #: seconds an optional source (web, a plug-in retriever) may take (None: the node's default)
    source_timeout_s: float | None = None
    #: called with the finished turn's state and thread id (a server records its traces here)
    on_turn: Callable[[dict[str, Any], str], None] | None = None
    #: the context of a run whose caller sent none (a server's RAGLOOP_* settings)
    context: Any = None

    def __post_init__(self) -> None:
        for role in ROLES:
            if getattr(self, role) is None:
                setattr(self, role, self.strategies)
        missing = [role for role in ROLES if getattr(self, role) is None]
        if missing:
            raise ConfigError(
                f"Deps has no {', '.join(missing)}: pass strategies= (one object for every "
                "role, e.g. OfflineStrategies) or each role by name"
            )

    def available_retrievers(self, order: tuple[str, ...]) -> list[str]:
        """The configured retriever order; a name no retriever answers to is a clear error."""
        unknown = [name for name in order if name not in self.retrievers]
        if unknown:
            raise unknown_name("retriever", unknown[0], list(self.retrievers))
        return list(order)


def calls_llm(obj: Any) -> bool:
    """Whether ``obj`` (a role, condenser, retriever or web search) may call a chat model, as
    it declares with a ``calls_llm`` attribute; one that declares nothing (a caller's own)
    is taken to."""
    return bool(getattr(obj, "calls_llm", True))


def may_call_llm(deps: Deps, retrievers: Iterable[str] | None = None) -> bool:
    """Whether a run over ``deps`` may call a chat model, so its calls and tokens need counting.

    Counting is a LangChain callback handler, and any handler makes LangGraph open a traced
    run for every node and edge: a fixed cost per step, for a count that is 0 by construction
    when every part declares it calls no model.
    ``retrievers``: the names the run may use (default: all); a mapping that builds its
    retrievers lazily answers for each name without building it (``calls_llm(name)``).
    """
    parts: list[Any] = [getattr(deps, role) for role in ROLES]
    parts += [p for p in (deps.condenser, deps.web) if p is not None]
    if any(calls_llm(p) for p in parts):
        return True
    mapping = deps.retrievers
    names = [n for n in (mapping if retrievers is None else retrievers) if n in mapping]
    lazy = getattr(mapping, "calls_llm", None)
    return any(lazy(n) if callable(lazy) else calls_llm(mapping[n]) for n in names)


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
    retriever = adapt(retriever, getattr(retriever, "name", None) or "retriever", k)
    if hasattr(retriever, "search") and not hasattr(retriever, "asearch"):
        pairs = await asyncio.to_thread(retriever.search, query, k)
        return [with_score(d, s, getattr(retriever, "name", "")) for d, s in pairs]
    if hasattr(retriever, "asearch"):
        return list(await retriever.asearch(query, k))
    return list(await retriever.ainvoke(query))[:k]
