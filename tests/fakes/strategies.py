"""Scripted graph strategies: the judge's verdicts come from a list, so every route is testable."""

from __future__ import annotations

from ragloop.eval.metrics.base import MetricResult
from ragloop.nodes.base import Assessment, Draft


class ScriptedStrategies:
    """Each ``assess`` call takes the next outcome: "sufficient", "irrelevant" or "incomplete"."""

    name = "scripted"

    def __init__(self, outcomes: list[str], draft: str = "", draft_relevancy: float = 0.0):
        self.outcomes = list(outcomes)
        self.draft_text = draft
        self.draft_score = draft_relevancy
        self.assess_calls = 0
        self.rewrites = 0
        self.rewrite_prompts: list[str | None] = []

    async def draft(self, question: str, prompt: str | None = None) -> Draft:
        if self.draft_text:
            return Draft(self.draft_text, "cache", False)
        return Draft("I don't know.", "none", True)

    async def claims(self, question: str, draft: Draft) -> list[str]:
        return [question]

    async def assess(self, question, candidates, kept, claims, keep) -> Assessment:
        outcome = (
            self.outcomes[min(self.assess_calls, len(self.outcomes) - 1)]
            if self.outcomes
            else "irrelevant"
        )
        self.assess_calls += 1
        if outcome == "irrelevant":
            return Assessment([0] * len(candidates), [False] * len(claims))
        if outcome == "incomplete":
            return Assessment([2] * len(candidates), [False] * len(claims))
        return Assessment([2] * len(candidates), [True] * len(claims))

    async def rewrite(self, question, query, contexts, prompt=None) -> str:
        self.rewrites += 1
        self.rewrite_prompts.append(prompt)
        return f"{query} more{self.rewrites}"

    async def answer(self, question, contexts, prompt=None):
        return f"Answer from {contexts[0]['id']} [1]", [1]

    async def answer_relevancy(self, question, answer, temperature=0.5) -> MetricResult:
        return MetricResult(0.5, None)

    async def draft_relevancy(self, question, draft, temperature=0.5) -> MetricResult:
        return MetricResult(self.draft_score, None)

    async def second_response(self, answer, reference) -> float:
        return 1.0
