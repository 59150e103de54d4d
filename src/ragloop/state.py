"""The graph state types, shared by the nodes and the graph builder (neither imports the other).

Every field is overwritten by the node that owns it, except ``messages`` (LangGraph's
``add_messages``: a thread is a chat). ``InputState`` and ``OutputState`` are the narrow
schemas a client sees; ``State`` adds the loop's internals. The TypedDicts come from
``typing_extensions`` so LangGraph Server can publish input/output schemas on Python 3.11.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage, BaseMessage, convert_to_messages
from langgraph.graph.message import add_messages
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
    boilerplate: bool  # what the corpus repeats, or a contents/index page: never quoted


class Step(TypedDict, total=False):
    """One step of the path the loop took, as fields; ``detail`` is the same step in words.

    Programs read the fields (``node``, ``action``, ``retriever``, ``query``, ``k``, ``n``,
    ``reason``); people read ``detail`` (``render_step`` adds the node). A field a step has
    nothing to say about is absent.
    """

    node: str
    action: str  # what the node did: "retrieve", "rewrite", "swap", "web", a verdict, ...
    retriever: str  # the retriever searched or chosen next
    query: str  # the query searched or chosen next
    k: int  # how many chunks were asked for
    n: int  # how many came back (retrieve), were kept (judge) or cited (answer)
    reason: str  # why
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


class InputState(TypedDict, total=False):
    """What a client sends for one turn: a ``question``, or a user message in ``messages``.

    ``messages`` takes what LangGraph Studio, agent-chat-ui and the SDK send
    (``{"messages": [{"role": "user", "content": "..."}]}``); ``reference`` and
    ``reference_contexts`` switch the judge to development mode for this turn only.
    """

    question: str
    #: the conversation of a thread as LangChain messages (LangGraph's ``add_messages``); a
    #: user message carries the standalone question it was read as in
    #: ``additional_kwargs["standalone"]``
    messages: Annotated[list[AnyMessage], add_messages]
    reference: str | None
    reference_contexts: list[str]


class OutputState(TypedDict, total=False):
    """What a client gets back: the answer and how it was reached, not the loop's internals."""

    messages: Annotated[list[AnyMessage], add_messages]
    question: str  # the standalone question that was answered
    answer: str
    citations: list[dict[str, Any]]
    scores: dict[str, float | None]  # None: unmeasured; JSON has no NaN (RunResult maps it)
    score_reasons: dict[str, str]  # why each score has its value (or is unmeasured)
    #: True when the answer says the corpus does not hold one (set by the answer step)
    not_found: bool
    stop_reason: str
    steps: list[Step]  # the path: one step per node, with what it did and why
    iteration: int


class State(InputState, OutputState, total=False):
    """Everything one run of the graph reads and writes."""

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
    actions: list[Action]
    turn_started: float  # wall-clock start of the turn (epoch seconds), for the trace
    #: the id of the LLM message the answer streamed as (None: not an LLM's), which the
    #: answer's message in ``messages`` takes
    answer_id: str | None


def as_messages(values: Any) -> list[BaseMessage]:
    """A stored ``messages`` value as LangChain messages (threads saved before messages were
    LangChain messages hold role/content dicts, with ``standalone`` beside them)."""
    return convert_to_messages(list(values or []))


def message_text(message: Any) -> str:
    """The text of a LangChain message (string content or text blocks), or of a role dict."""
    if isinstance(message, BaseMessage):
        return str(message.text)
    return str((message or {}).get("content", ""))


def is_user(message: Any) -> bool:
    """Whether ``message`` is the user's (a ``HumanMessage``)."""
    return isinstance(message, BaseMessage) and message.type == "human"


def standalone_of(message: Any) -> str | None:
    """The standalone question a user message was read as, if the turn condensed it."""
    if not isinstance(message, BaseMessage):
        return None
    value = message.additional_kwargs.get("standalone")
    return value if isinstance(value, str) else None


def add_step(state: State, node: str, detail: str, **fields: Any) -> list[Step]:
    """The path so far plus one step (a new list: state is never mutated in place).

    ``fields`` are the step's structured fields (``action``, ``retriever``, ``query``, ``k``,
    ``n``, ``reason``); None values are left out.
    """
    unknown = set(fields) - set(Step.__annotations__)
    if unknown:
        raise TypeError(f"unknown step field(s): {', '.join(sorted(unknown))}")
    given = {k: v for k, v in fields.items() if v is not None}
    step = Step(node=node, **given, detail=detail, iteration=state.get("iteration", 0))  # type: ignore[typeddict-item]
    return [*state.get("steps", []), step]


def render_step(step: Step | dict[str, Any]) -> str:
    """A step as one line for people: ``node: detail``."""
    return f"{step.get('node', '?')}: {step.get('detail', '')}"


def add_fallback(steps: list[Step], state: State, node: str, why: str | None) -> list[Step]:
    """``steps`` plus a ``NODE-fallback`` step saying ``why``, when a fallback made the result."""
    if not why:
        return steps
    return [*steps, Step(node=f"{node}-fallback", detail=why, iteration=state.get("iteration", 0))]
