"""answer: from the kept contexts with [n] citations, or from the draft when no retrieval ran."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context
from ragloop.nodes.base import Deps
from ragloop.state import State, add_step

NOT_FOUND = "I could not find an answer to this in the sources I can search."


def make_answer(deps: Deps) -> Any:
    """Build the answer node."""

    async def answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = runtime.context
        stop = state.get("stop_reason") or ""
        if not state.get("retrieve"):
            return {
                "answer": state.get("draft", ""),
                "citations": [],
                "stop_reason": "no_retrieval",
                "steps": add_step(state, "answer", "answered from the draft (no retrieval)"),
            }
        contexts = sorted(
            state.get("contexts", []), key=lambda c: (-c.get("grade", 0), -c.get("score", 0.0))
        )
        if not contexts:
            return {
                "answer": NOT_FOUND,
                "citations": [],
                "contexts": [],
                "stop_reason": stop or "exhausted",
                "steps": add_step(state, "answer", "nothing relevant was found; said so"),
            }
        text, cited = await deps.strategies.answer(
            state["question"], contexts, ctx.prompts.get("answer")
        )
        citations = [
            {
                "n": n,
                "id": contexts[n - 1]["id"],
                "source": contexts[n - 1].get("source", ""),
                "title": contexts[n - 1].get("title", ""),
                "origin": contexts[n - 1].get("origin", "kb"),
            }
            for n in sorted(set(cited))
            if 1 <= n <= len(contexts)
        ]
        detail = f"answered from {len(contexts)} context(s), citing {len(citations)}"
        return {
            "answer": text,
            "citations": citations,
            "contexts": contexts,
            "stop_reason": stop or "sufficient",
            "steps": add_step(state, "answer", detail),
        }

    return answer
