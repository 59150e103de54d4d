"""The graph state types, shared by the nodes and the graph builder (neither imports the other).

Every field is overwritten by the node that owns it; nothing accumulates. The TypedDicts come from
``typing_extensions`` so LangGraph Server can publish input/output schemas on Python 3.11.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict


class ContextItem(TypedDict, total=False):
    """A retrieved chunk with where it came from and the judge's grade (0/1/2)."""

    id: str
    text: str
    source: str
    title: str
    page: int  # the PDF page the chunk came from (citations show it); absent elsewhere
    retriever: str
    origin: str  # "kb" or "web" (web text is untrusted data)
    score: float
    grade: int
    evidence: float  # the judge's evidence (0..1), one scale whatever retriever found it


class Step(TypedDict, total=False):
    """One line of the path the loop took: which node, what it did, and why."""

    node: str
    detail: str
    iteration: int


class Action(TypedDict, total=False):
    """A corrective step the correct node chose (or skipped), with the reason."""

    action: str  # "rewrite" | "swap" | "web" | "skip:<action>" | "none"
    reason: str
    retriever: str
    query: str
    iteration: int


class Judgment(TypedDict, total=False):
    """The judge's numbers and verdict for the latest retrieval."""

    verdict: str  # "sufficient" | "irrelevant" | "incomplete"
    relevance: float  # mean grade / 2 over the latest candidates, 0..1
    recall: float  # share of reference sentences / claims supported, 0..1
    kept: int
    dropped: int
    mode: str  # "development" (against reference) or "service" (aspects + draft claims)
    second_response: float | None
    reason: str
    signals: dict[str, float]  # what the latest retrieval showed (names/terms/meaning found)


class State(TypedDict, total=False):
    """Everything one run of the graph reads and writes."""

    question: str
    reference: str | None
    reference_contexts: list[str]
    messages: list[Any]
    draft: str
    draft_source: str
    draft_relevancy: float
    retrieve: bool
    query: str
    retriever: str
    tried: list[list[str]]  # [source, query] pairs already run; never repeated
    candidates: list[ContextItem]
    contexts: list[ContextItem]
    judgment: Judgment
    iteration: int
    actions: list[Action]
    steps: list[Step]
    answer: str
    citations: list[dict[str, Any]]
    scores: dict[str, float]
    score_reasons: dict[str, str]  # why each score has its value (or is unmeasured)
    stop_reason: str


def add_step(state: State, node: str, detail: str) -> list[Step]:
    """The path so far plus one step (a new list: state is never mutated in place)."""
    return [
        *state.get("steps", []),
        Step(node=node, detail=detail, iteration=state.get("iteration", 0)),
    ]
