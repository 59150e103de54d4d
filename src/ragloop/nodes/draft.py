"""draft: a closed-book answer first (LLM, or the semantic answer cache offline)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps
from ragloop.state import State, add_fallback, add_step


def make_draft(deps: Deps) -> Any:
    """Build the draft node; it also resets the per-question fields of the state."""

    async def draft(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        question = state["question"]
        result = await deps.drafter.draft(question, ctx.prompts.get("draft"))
        # the path starts fresh each turn; only the condense step of this turn is kept
        condensed = [s for s in state.get("steps", []) if s.get("node") == "condense"]
        start: State = {"iteration": 0, "steps": condensed}
        how = {"llm": "closed-book LLM answer", "cache": "answer cache hit", "none": "no draft"}
        detail = f"{how.get(result.source, result.source)}" + (
            " (noncommittal)" if result.noncommittal else ""
        )
        return {
            "draft": result.text,
            "draft_source": result.source,
            "retrieve": result.needs_retrieval,  # decide reads the strategy's opinion
            "query": question,
            "retriever": (deps.available_retrievers(ctx.retrievers) or ["dense"])[0],
            "tried": [],
            "candidates": [],
            "contexts": [],
            "dropped": [],
            "judgment": {},
            "iteration": 0,
            "actions": [],
            "answer": "",
            "citations": [],
            "scores": {},
            "stop_reason": "",
            "steps": add_fallback(
                add_step(start, "draft", detail), start, "draft", result.fallback
            ),
        }

    return draft
