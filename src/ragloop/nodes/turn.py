"""condense and remember: the two ends of a chat turn, so a graph thread is a conversation.

``condense`` opens a turn: it takes the new user text (the ``question`` input, or a new user
message), turns a follow-up into a standalone question against the thread's earlier turns
(``ragloop.chat.condense``, the same condenser the CLI chat uses) and logs the user message.
``remember`` closes it: it logs the answer and clears the per-turn inputs (``reference``,
``reference_contexts``) so the next turn on the thread never inherits them; when the builder
was handed a trace store it records the turn there, as the CLI does for its turns.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from ragloop.config import Context
from ragloop.nodes.base import Deps
from ragloop.state import State, Step

__all__ = ["make_condense", "make_remember", "turns_of"]


def turns_of(messages: list[dict[str, Any]]) -> list[Any]:
    """The finished (user, assistant) pairs of a message log as chat ``Turn``s."""
    from ragloop.chat.condense import Turn

    turns, pending = [], None
    for msg in messages:
        if msg.get("role") == "user":
            pending = msg
        elif msg.get("role") == "assistant" and pending is not None:
            question = str(pending.get("standalone") or pending.get("content", ""))
            turns.append(Turn(question, str(msg.get("content", "")), str(pending["content"])))
            pending = None
    return turns


def make_condense(deps: Deps, condenser: Any = None) -> Any:
    """Build the condense node (the heuristic or LLM condenser the strategies imply)."""
    from ragloop.chat.condense import condenser_for

    chosen = condenser or condenser_for(deps.strategies)

    async def condense(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        messages = list(state.get("messages") or [])
        last = messages[-1] if messages else {}
        started = {"turn_started": time.time()}
        if last.get("role") == "user" and last.get("standalone") == state.get("question"):
            # the caller (ragloop chat) condensed already and sent the question with it
            return {**started, "question": str(last["standalone"]), "steps": []}
        if last.get("role") == "user" and "standalone" not in last:  # sent as a message
            text, history, log = str(last.get("content", "")), turns_of(messages[:-1]), []
        else:
            text, history = str(state.get("question") or ""), turns_of(messages)
            log = [{"role": "user", "content": text}]
        if not text.strip():
            from ragloop.errors import ConfigError

            raise ConfigError("the turn has no question: send 'question' or a user message")
        question = (await chosen.acondense(text, history)).strip() or text.strip()
        if log:
            log[0]["standalone"] = question
        else:  # mark the client's own message as condensed (the reducer replaces the log)
            messages[-1] = {**last, "standalone": question}
            log = messages
        steps: list[Step] = []
        if question != text.strip():
            steps = [Step(node="condense", detail=f"follow-up read as '{question}'", iteration=0)]
        return {**started, "question": question, "messages": log, "steps": steps}

    return condense


def make_remember(deps: Deps) -> Any:
    """Build the remember node: log the answer, clear per-turn inputs, record the trace."""

    async def remember(
        state: State, runtime: Runtime[Context], config: RunnableConfig
    ) -> dict[str, Any]:
        store = deps.extras.get("traces")
        if store is not None:
            import asyncio

            thread = str((config.get("configurable") or {}).get("thread_id") or "")
            model = str(deps.extras.get("model", ""))
            await asyncio.to_thread(_record, store, dict(state), thread, model)
        return {
            "messages": [{"role": "assistant", "content": state.get("answer", "")}],
            "reference": None,
            "reference_contexts": [],
        }

    return remember


def _record(store: Any, state: dict[str, Any], thread: str, model: str) -> None:
    """Write the finished turn to ``store`` (anything with ``add(Trace)``)."""
    from ragloop.chat.traces import trace_from_result
    from ragloop.graph.result import RunResult

    started = state.get("turn_started")
    latency = (time.time() - started) * 1000 if isinstance(started, float) else 0.0
    result = RunResult.from_state(state, latency_ms=latency)
    user: dict[str, Any] = next(
        (m for m in reversed(state.get("messages") or []) if m.get("role") == "user"), {}
    )
    original = str(user.get("content") or result.question)
    store.add(trace_from_result(result, thread, model, original, source="server"))
