"""condense and remember: the two ends of a chat turn, so a graph thread is a conversation.

``condense`` opens a turn: it checks the input (``ragloop.nodes.inputs``), takes the new user
text (the ``question`` input, or a new user message as Studio and agent-chat-ui send it),
turns a follow-up into a standalone question against the thread's earlier turns
(``ragloop.chat.condense``, the same condenser the CLI chat uses) and logs the user message
with the standalone question beside what was typed (``additional_kwargs["standalone"]``).
``remember`` closes it: it logs the answer as an ``AIMessage`` and clears the per-turn inputs
(``reference``, ``reference_contexts``) so the next turn on the thread never inherits them;
when the builder was handed a trace store it records the turn there, as the CLI does.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from ragloop.config import Context
from ragloop.errors import ConfigError
from ragloop.nodes.base import Deps
from ragloop.nodes.inputs import DEFAULT_MAX_QUESTION_CHARS, check_inputs, check_question
from ragloop.state import State, Step, is_user, message_text, standalone_of

__all__ = ["make_condense", "make_remember", "turns_of"]


def turns_of(messages: list[Any]) -> list[Any]:
    """The finished (user, assistant) pairs of a message log as chat ``Turn``s."""
    from ragloop.chat.condense import Turn

    turns, pending = [], None
    for msg in messages:
        if is_user(msg):
            pending = msg
        elif isinstance(msg, AIMessage) and pending is not None:
            typed = message_text(pending)
            question = standalone_of(pending) or typed
            turns.append(Turn(question, message_text(msg), typed))
            pending = None
    return turns


def _limit(deps: Deps) -> int:
    return int(deps.extras.get("max_question_chars") or DEFAULT_MAX_QUESTION_CHARS)


def make_condense(deps: Deps, condenser: Any = None) -> Any:
    """Build the condense node (the heuristic or LLM condenser the strategies imply)."""
    from ragloop.chat.condense import condenser_for

    chosen = condenser or condenser_for(deps.strategies)

    async def condense(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        check_inputs(state)
        messages = list(state.get("messages") or [])
        last = messages[-1] if messages else None
        started: dict[str, Any] = {"turn_started": time.time(), "not_found": False}
        marked = standalone_of(last) if is_user(last) else None
        if marked is not None and marked == state.get("question"):
            # the caller (ragloop chat) condensed already and sent the question with it
            check_question(marked, "question", _limit(deps))
            return {**started, "question": marked, "steps": []}
        if is_user(last) and marked is None:  # the turn came as a user message
            text = check_question(message_text(last), "messages", _limit(deps))
            history, new = turns_of(messages[:-1]), last
        else:
            value = state.get("question")
            if value is None:
                text, history, new = "", [], None
            else:
                text = check_question(value, "question", _limit(deps))
                history, new = turns_of(messages), None
        if not text.strip():
            raise ConfigError(
                'the turn has no question: send {"question": "..."} or '
                '{"messages": [{"role": "user", "content": "..."}]}'
            )
        question = (await chosen.acondense(text, history)).strip() or text.strip()
        if new is None:
            new = HumanMessage(content=text)
        # the same id replaces the client's own message (add_messages), now marked as read
        extra = {**new.additional_kwargs, "standalone": question}
        marked_message = new.model_copy(update={"additional_kwargs": extra})
        steps: list[Step] = []
        if question != text.strip():
            steps = [Step(node="condense", detail=f"follow-up read as '{question}'", iteration=0)]
        return {**started, "question": question, "messages": [marked_message], "steps": steps}

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
            "messages": [AIMessage(content=state.get("answer", ""))],
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
    user = next((m for m in reversed(state.get("messages") or []) if is_user(m)), None)
    original = (message_text(user) if user is not None else "") or result.question
    store.add(trace_from_result(result, thread, model, original, source="server"))
