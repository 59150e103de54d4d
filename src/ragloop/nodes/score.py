"""score: answer relevancy of the final answer, with the judge's context numbers beside it."""

from __future__ import annotations

import math
import re
from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps
from ragloop.state import State, add_step

_CITATION = re.compile(r"[ \t]+\[\d+\](?=\s|$)")


def without_citations(answer: str) -> str:
    """The answer's statements without their ``[n]`` markers: what it says, not where from.

    A marker says nothing about relevance, and without it an extractive answer's sentences
    are the very texts the answer step embedded, so scoring embeds nothing new.
    """
    return _CITATION.sub("", answer)


def make_score(deps: Deps) -> Any:
    """Build the score node."""

    async def score(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        answer = without_citations(state.get("answer", ""))
        result = await deps.scorer.answer_relevancy(state["question"], answer, ctx.temperature)
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
        reasons = {
            "answer_relevancy": result.reason
            or ("measured" if result.measured else "answer relevancy could not be computed"),
            "context_relevance": (
                f"mean judge grade of {len(contexts)} kept context(s), 0/1/2 scaled to 0..1"
                if contexts
                else "no context was kept, so there is no context relevance to report"
            ),
            "context_recall": (
                str(judgment.get("reason") or "the judge's recall of the latest retrieval")
                if judgment
                else "no retrieval was judged (answered from the draft)"
            ),
        }
        shown = ", ".join(f"{k}={v:.2f}" for k, v in scores.items() if not math.isnan(v))
        return {
            # unmeasured is None in the state (JSON has no NaN); RunResult turns it back to NaN
            "scores": {k: (None if math.isnan(v) else v) for k, v in scores.items()},
            "score_reasons": reasons,
            "steps": add_step(state, "score", shown or "nothing to score"),
        }

    return score
