"""score: answer relevancy of the final answer, with the judge's context numbers beside it."""

from __future__ import annotations

import math
from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context
from ragloop.nodes.base import Deps
from ragloop.state import State, add_step


def make_score(deps: Deps) -> Any:
    """Build the score node."""

    async def score(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        result = await deps.strategies.answer_relevancy(state["question"], state.get("answer", ""))
        contexts = state.get("contexts", [])
        judgment = state.get("judgment") or {}
        scores = {
            "answer_relevancy": result.value,
            "context_relevance": (
                sum(c.get("grade", 0) for c in contexts) / (2 * len(contexts))
                if contexts
                else math.nan
            ),
            "context_recall": float(judgment.get("recall", math.nan)) if judgment else math.nan,
        }
        shown = ", ".join(f"{k}={v:.2f}" for k, v in scores.items() if not math.isnan(v))
        return {"scores": scores, "steps": add_step(state, "score", shown or "nothing to score")}

    return score
