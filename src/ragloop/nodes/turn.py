"""condense and remember: the two ends of a chat turn, so a graph thread is a conversation.

``condense`` opens a turn: it takes the new user text (the ``question`` input, or a new user
message), turns a follow-up into a standalone question against the thread's earlier turns
(``ragloop.nodes.condense``, the same condenser the CLI chat uses) and logs the user message.
``remember`` closes it: it logs the answer and clears the per-turn inputs (``reference``,
``reference_contexts``) so the next turn on the thread never inherits them, and hands the
finished state to ``Deps.on_turn`` when the caller set one (a server records its traces there:
the graph itself writes nothing).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from ragloop.config import Context
from ragloop.errors import ConfigError
from ragloop.nodes.base import Deps
from ragloop.nodes.condense import HeuristicCondenser, Turn
from ragloop.state import State, Step

__all__ = ["make_condense", "make_remember", "turns_of"]


def turns_of(messages: list[dict[str, Any]]) -> list[Any]:
    """The finished (user, assistant) pairs of a message log as chat ``Turn``s."""
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
    chosen = condenser or deps.condenser or HeuristicCondenser()

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
            raise ConfigError("the turn has no question: send 'question' or a user message")
        question = (await chosen.acondense(text, history)).strip() or text.strip()
        if log:
            log[0]["standalone"] = question
        else:  # mark the client's own message as condensed (the reducer replaces the log)
            messages[-1] = {**last, "standalone": question}
            log = messages
        steps: list[Step] = []
        if question != text.strip():
            detail = f"follow-up read as '{question}'"
            steps = [
                Step(node="condense", action="condense", query=question, detail=detail, iteration=0)
            ]
        return {**started, "question": question, "messages": log, "steps": steps}

    return condense


def make_remember(deps: Deps) -> Any:
    """Build the remember node: log the answer, clear per-turn inputs, call ``deps.on_turn``."""

    async def remember(
        state: State, runtime: Runtime[Context], config: RunnableConfig
    ) -> dict[str, Any]:
        if deps.on_turn is not None:
            thread = str((config.get("configurable") or {}).get("thread_id") or "")
            await asyncio.to_thread(deps.on_turn, dict(state), thread)
        return {
            "messages": [{"role": "assistant", "content": state.get("answer", "")}],
            "reference": None,
            "reference_contexts": [],
        }

    return remember
