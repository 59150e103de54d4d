"""The graph state types, shared by the nodes and the graph builder (neither imports the other).

Every field is overwritten by the node that owns it; nothing accumulates. The TypedDicts come from
``typing_extensions`` so LangGraph Server can publish input/output schemas on Python 3.11.
"""

from __future__ import annotations

from typing import Annotated, Any

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
    #: the conversation of a thread: user turns (with their standalone question) and answers
    messages: Annotated[list[dict[str, Any]], merge_messages]
    draft: str
    draft_source: str
    draft_relevancy: float | None  # None: unmeasured (the decide step says why)
    retrieve: bool
    query: str
    retriever: str
    tried: list[list[str]]  # [source, query] pairs already run; never repeated
    candidates: list[ContextItem]
    contexts: list[ContextItem]
    #: graded below the keep grade by a judge that measures evidence; read last by the
    #: answer only to make up k passages (a false low grade cannot lose a passage)
    dropped: list[ContextItem]
    judgment: Judgment
    iteration: int
    actions: list[Action]
    steps: list[Step]
    answer: str
    citations: list[dict[str, Any]]
    scores: dict[str, float | None]  # None: unmeasured; JSON has no NaN (RunResult maps it)
    score_reasons: dict[str, str]  # why each score has its value (or is unmeasured)
    stop_reason: str
    #: the answer says the documents do not seem to answer (evidence weak for every sentence)
    not_found: bool
    turn_started: float  # wall-clock start of the turn (epoch seconds), for the trace


def _as_message(message: Any) -> dict[str, Any]:
    """One message as the role/content dict the state keeps (LangChain messages converted)."""
    if not isinstance(message, dict):
        role = {"human": "user", "ai": "assistant"}.get(getattr(message, "type", ""), "user")
        return {"role": role, "content": str(getattr(message, "content", message))}
    out = dict(message)
    if "role" not in out:
        kind = str(out.pop("type", "user"))
        out["role"] = {"human": "user", "ai": "assistant"}.get(kind, kind)
    out["content"] = str(out.get("content", ""))
    return out


def merge_messages(old: list[dict[str, Any]] | None, new: Any) -> list[dict[str, Any]]:
    """The messages reducer: a list that resends the thread's history replaces it, else appends.

    A chat client that resends the whole conversation (``ChatSession``, which also drops a
    cancelled turn's message) and a server client that sends only the new message (a
    LangGraph Server thread) both end with one history.
    """
    old = list(old or [])
    added = [_as_message(m) for m in (new if isinstance(new, list) else [new])]
    if not old:
        return added

    def key(m: dict[str, Any]) -> tuple[Any, Any]:
        return m.get("role"), m.get("content")

    resent = len(added) >= 2 and key(added[0]) == key(old[0])
    if resent or [key(m) for m in added[: len(old)]] == [key(m) for m in old]:
        return added
    return old + added


def add_step(state: State, node: str, detail: str) -> list[Step]:
    """The path so far plus one step (a new list: state is never mutated in place)."""
    return [
        *state.get("steps", []),
        Step(node=node, detail=detail, iteration=state.get("iteration", 0)),
    ]


def add_fallback(steps: list[Step], state: State, node: str, why: str | None) -> list[Step]:
    """``steps`` plus a ``NODE-fallback`` step saying ``why``, when a fallback made the result."""
    if not why:
        return steps
    return [*steps, Step(node=f"{node}-fallback", detail=why, iteration=state.get("iteration", 0))]
