"""Recorded chat threads as RAGAS ``MultiTurnSample``s (retrieve/web/rewrite as tool calls).

The trace store (``traces.sqlite``, written by ``ragloop chat`` beside ``chat.sqlite``)
keeps every served turn with its corrective actions and contexts; each thread becomes
one conversation: the human question, the AI's tool calls (``retrieve``, then
``rewrite_query`` / ``retrieve`` with another retriever / ``web_search`` as the loop
chose them), the contexts as the tool's output, and the AI's answer. Given only the
checkpointer (``chat.sqlite``) with no trace store beside it, the conversations have
questions and answers but no tool calls.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragloop.chat.session import history_from_state
from ragloop.chat.traces import TraceStore
from ragloop.errors import DatasetError
from ragloop.eval.schema import EvaluationDataset, Message, MultiTurnSample, ToolCall

TRACES_NAME = "traces.sqlite"


def _tables(path: Path) -> set[str]:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    except sqlite3.Error as exc:
        raise DatasetError(f"cannot read {path} as SQLite: {exc}") from None
    return {r[0] for r in rows}


def tool_calls_of(turn: Any) -> list[ToolCall]:
    """The loop's path for one turn as tool calls: first retrieval, then each correction."""
    calls: list[ToolCall] = []
    steps = [s.get("node") for s in getattr(turn, "steps", []) or [] if isinstance(s, dict)]
    if "retrieve" in steps or turn.contexts:
        calls.append(ToolCall(name="retrieve", args={"query": turn.question}))
    for action in turn.actions or []:
        kind, query = action.get("action"), action.get("query") or turn.question
        if kind == "rewrite":
            calls.append(ToolCall(name="rewrite_query", args={"query": query}))
        elif kind == "swap":
            args = {"query": query, "retriever": action.get("retriever", "")}
            calls.append(ToolCall(name="retrieve", args=args))
        elif kind == "web":
            calls.append(ToolCall(name="web_search", args={"query": query}))
    return calls


def turns_to_messages(turns: Iterable[Any]) -> list[Message]:
    """Trace turns (question, actions, contexts, answer) as human/ai/tool messages."""
    messages: list[Message] = []
    for turn in turns:
        messages.append(Message(type="human", content=turn.original or turn.question))
        calls = tool_calls_of(turn)
        if calls:
            messages.append(Message(type="ai", content="", tool_calls=calls))
            texts = [str(c.get("text", "")) for c in turn.contexts or [] if isinstance(c, dict)]
            messages.append(Message(type="tool", content="\n\n".join(texts)))
        messages.append(Message(type="ai", content=turn.answer or ""))
    return messages


def _from_traces(path: Path) -> list[MultiTurnSample]:
    by_thread: dict[str, list[Any]] = {}
    for turn in TraceStore(path).turns():
        by_thread.setdefault(turn.thread or f"turn-{turn.id}", []).append(turn)
    return [
        MultiTurnSample(user_input=turns_to_messages(turns), thread_id=thread)  # type: ignore[call-arg]
        for thread, turns in by_thread.items()
    ]


def _from_checkpoints(path: Path) -> list[MultiTurnSample]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    latest: dict[str, dict[str, Any]] = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False) as conn:
        for item in SqliteSaver(conn).list(None):
            thread = str(item.config["configurable"].get("thread_id", ""))
            latest.setdefault(thread, dict(item.checkpoint.get("channel_values", {})))  # newest
    samples = []
    for thread, values in latest.items():
        messages: list[Message] = []
        for turn in history_from_state(values, finished=bool(values.get("answer"))):
            messages.append(Message(type="human", content=turn.original or turn.question))
            messages.append(Message(type="ai", content=turn.answer))
        if messages:
            samples.append(MultiTurnSample(user_input=messages, thread_id=thread))  # type: ignore[call-arg]
    return samples


def load_threads(path: str | Path) -> list[MultiTurnSample]:
    """Every recorded thread at ``path`` (a trace store, or chat.sqlite) as a conversation."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(
            f"no thread store at {path}: pass the chat.sqlite (or traces.sqlite) that "
            "`ragloop chat` writes in its data folder (.ragloop/ by default)"
        )
    if "turns" in _tables(path):
        return _from_traces(path)
    beside = path.with_name(TRACES_NAME)
    if beside.is_file() and "turns" in _tables(beside):
        return _from_traces(beside)
    if "checkpoints" in _tables(path):
        return _from_checkpoints(path)
    raise DatasetError(f"{path} holds neither chat threads nor traces")


def thread_dataset(path: str | Path, topics: str | None = None) -> Any:
    """The recorded threads as an EvaluationDataset; ``topics`` ("a,b") as reference_topics."""
    samples = load_threads(path)
    wanted = [t.strip() for t in (topics or "").split(",") if t.strip()]
    if wanted:
        samples = [s.model_copy(update={"reference_topics": wanted}) for s in samples]
    if not samples:
        raise DatasetError(f"{path} holds no recorded conversation yet: chat first")
    return EvaluationDataset.from_list(samples)


def default_thread_metrics(has_llm: bool, topics: str | None) -> list[str]:
    """What ``ragloop eval --threads`` scores when no ``--metrics`` is given.

    Recorded threads have no reference answer or reference tool calls, so: with a judge,
    goal accuracy (against the inferred goal) and the rubric grade, plus topic adherence
    when ``--topics`` names the allowed topics; without one, the offline topic adherence.
    """
    with_topics = bool(topics and topics.strip())
    if has_llm:
        return ["agent_goal_accuracy", "domain_specific_rubrics"] + (
            ["topic_adherence"] if with_topics else []
        )
    if with_topics:
        return ["offline_topic_adherence"]
    raise DatasetError(
        "recorded threads have no references: give --topics a,b (offline topic adherence) "
        "or --llm SPEC (goal accuracy, rubric grade), or name --metrics"
    )
