"""A chat turn's trace, mended after a kill: the checkpoint is saved before the trace.

A turn is committed to the chat memory first, then its trace is written (one SQLite file
each, or Postgres tables: no transaction spans both). A kill -9 between the two would lose
the trace for good; the next session on the thread (or its next turn) finds the saved turn
without a trace, keyed by its checkpoint id, and writes it from the saved state.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ragloop.chat.traces import trace_from_result
from ragloop.graph.result import RunResult


def _last_user_text(messages: Any) -> str:
    """The text of the last user message (role/content dicts or LangChain messages)."""
    for message in reversed(list(messages or [])):
        if isinstance(message, dict) and message.get("role") == "user":
            return str(message.get("content", ""))
        if getattr(message, "type", None) == "human":
            return str(message.content)
    return ""


async def checkpoint_id(graph: Any, config: dict[str, Any]) -> str:
    """The id of the thread's latest checkpoint ("" when it has none)."""
    snapshot = await graph.aget_state(config)
    return str((snapshot.config or {}).get("configurable", {}).get("checkpoint_id") or "")


async def repair_trace(
    graph: Any, config: dict[str, Any], traces: Any, thread: str, model: str
) -> bool:
    """Write the trace of the thread's last finished turn when ``traces`` lacks it.

    Returns True when one was written (its latency and call counts are unknown: 0).
    Call it under the thread's lock, so a turn writing its own trace is never raced.
    """
    if not hasattr(traces, "has_turn"):
        return False
    snapshot = await graph.aget_state(config)
    values = dict(snapshot.values or {})
    if snapshot.next or not values.get("answer") or "question" not in values:
        return False  # no finished turn saved: nothing can be missing
    checkpoint = await checkpoint_id(graph, config)
    question, answer = str(values["question"]), str(values["answer"])
    if await asyncio.to_thread(traces.has_turn, thread, checkpoint, question, answer):
        return False
    original = _last_user_text(values.get("messages")) or question
    trace = trace_from_result(RunResult.from_state(values), thread, model, original)
    trace.checkpoint = checkpoint
    await asyncio.to_thread(traces.add, trace)
    return True
