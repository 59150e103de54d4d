"""condense and remember: the two ends of a chat turn, so a graph thread is a conversation.

``condense`` opens a turn: it checks the input (``ragloop.nodes.inputs``), takes the new user
text (the ``question`` input, or a new user message as Studio and agent-chat-ui send it),
turns a follow-up into a standalone question against the thread's earlier turns
(``ragloop.nodes.condense``, the same condenser the CLI chat uses) and logs the user message
with the standalone question beside what was typed (``additional_kwargs["standalone"]``).
``remember`` closes it: it logs the answer as an ``AIMessage`` and clears the per-turn inputs
(``reference``, ``reference_contexts``) so the next turn on the thread never inherits them,
and hands the finished state to ``Deps.on_turn`` when the caller set one (a server records its
traces there: the graph itself writes nothing).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from ragloop.config import Context
from ragloop.errors import ConfigError
from ragloop.nodes.base import Deps
from ragloop.nodes.condense import HeuristicCondenser, Turn
from ragloop.nodes.inputs import DEFAULT_MAX_QUESTION_CHARS, check_inputs, check_question
from ragloop.state import State, Step, is_user, message_text, standalone_of

__all__ = ["make_condense", "make_remember", "turns_of"]


def turns_of(messages: list[Any]) -> list[Any]:
    """The finished (user, assistant) pairs of a message log as chat ``Turn``s."""
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
    return deps.max_question_chars or DEFAULT_MAX_QUESTION_CHARS


def make_condense(deps: Deps, condenser: Any = None) -> Any:
    """Build the condense node (the heuristic or LLM condenser the strategies imply)."""
    chosen = condenser or deps.condenser or HeuristicCondenser()

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
            detail = f"follow-up read as '{question}'"
            steps = [
                Step(node="condense", action="condense", query=question, detail=detail, iteration=0)
            ]
        return {**started, "question": question, "messages": [marked_message], "steps": steps}

    return condense


def _answer_id(state: Any) -> str | None:
    """The id the answer's message takes: the one its streamed tokens carried, so a chat UI
    merges the two (None, a fresh id, when it was not streamed or the thread has it already)."""
    wanted = state.get("answer_id")
    if not wanted or any(getattr(m, "id", None) == wanted for m in state.get("messages") or []):
        return None
    return str(wanted)


def make_remember(deps: Deps) -> Any:
    """Build the remember node: log the answer, clear per-turn inputs, call ``deps.on_turn``."""

    async def remember(
        state: State, runtime: Runtime[Context], config: RunnableConfig
    ) -> dict[str, Any]:
        if deps.on_turn is not None:
            thread = str((config.get("configurable") or {}).get("thread_id") or "")
            await asyncio.to_thread(deps.on_turn, dict(state), thread)
        return {
            "messages": [AIMessage(content=state.get("answer", ""), id=_answer_id(state))],
            "reference": None,
            "reference_contexts": [],
        }

    return remember
