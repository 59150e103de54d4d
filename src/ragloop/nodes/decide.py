"""decide: retrieve when the draft is noncommittal, weakly relevant, or the LLM asks for it."""

from __future__ import annotations

import math
from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps
from ragloop.state import State, add_step


def make_decide(deps: Deps) -> Any:
    """Build the decide node (``retrieval = auto | always | never``)."""

    async def decide(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        if ctx.retrieval == "always":
            return _out(state, True, None, "retrieval=always")
        if ctx.retrieval == "never":
            return _out(state, False, None, "retrieval=never")
        draft = state.get("draft", "")
        if state.get("draft_source") == "none" or not draft:
            return _out(state, True, None, "the draft is noncommittal")
        scored = await deps.scorer.draft_relevancy(state["question"], draft, ctx.temperature)
        relevancy = scored.value
        if scored.reason == "noncommittal":
            return _out(state, True, relevancy, "the draft is noncommittal")
        if math.isnan(relevancy) or relevancy < ctx.answer_relevancy_threshold:
            return _out(
                state,
                True,
                relevancy,
                f"draft answer relevancy {relevancy:.2f} < {ctx.answer_relevancy_threshold:.2f}",
            )
        if state.get("retrieve") is True:
            return _out(
                state, True, relevancy, "the model says the question needs specific knowledge"
            )
        why = f"draft answer relevancy {relevancy:.2f} >= {ctx.answer_relevancy_threshold:.2f}"
        if scored.reason:
            why += f" ({scored.reason})"
        return _out(state, False, relevancy, why)

    return decide


def _out(state: State, retrieve: bool, relevancy: float | None, why: str) -> dict[str, Any]:
    verb = "retrieve" if retrieve else "answer from the draft"
    return {
        "retrieve": retrieve,
        # None when unmeasured (the step says why): the state is JSON, which has no NaN
        "draft_relevancy": relevancy
        if relevancy is not None and math.isfinite(relevancy)
        else None,
        "steps": add_step(
            state,
            "decide",
            f"{verb}: {why}",
            action="retrieve" if retrieve else "answer",
            reason=why,
        ),  # fmt: skip
    }
