"""Is the response backed by the contexts: RAGAS Faithfulness and ResponseGroundedness."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import (
    DualJudgeMetric,
    LLMMetric,
    calls,
    decided,
    failed,
    join_contexts,
)
from ragloop.eval.metrics.base import MetricResult, nan
from ragloop.eval.schema import SingleTurnSample


class Statements(BaseModel):
    statements: list[str] = Field(description="atomic, self-contained statements")


#: shared with AnswerCorrectness: break an answer into atomic statements
STATEMENTS_PROMPT = Prompt(
    name="statements",
    instruction=(
        "Break the answer to the question into atomic statements: each one short, "
        "self-contained (no pronouns that need the other sentences) and carrying a single "
        "claim. Keep the answer's meaning; do not add facts."
    ),
    examples=[
        (
            {
                "question": "Who was Ada Lovelace?",
                "answer": "Ada Lovelace was an English mathematician. She wrote the first "
                "published algorithm for Babbage's Analytical Engine.",
            },
            {
                "statements": [
                    "Ada Lovelace was an English mathematician.",
                    "Ada Lovelace wrote the first published algorithm for the Analytical Engine.",
                    "The Analytical Engine was designed by Charles Babbage.",
                ]
            },
        ),
    ],
)


class Support(BaseModel):
    statement: str = ""
    reason: str = ""
    verdict: bool = Field(description="true when the contexts support the statement")


class SupportVerdicts(BaseModel):
    verdicts: list[Support]


SUPPORT_PROMPT = Prompt(
    name="faithfulness.verdicts",
    instruction=(
        "For each statement, in the order given, decide whether it can be inferred from the "
        "contexts alone: verdict true if the contexts support it, false if they do not or "
        "say nothing about it. Give a short reason and exactly one verdict per statement."
    ),
    examples=[
        (
            {
                "contexts": ["Lisbon is the capital of Portugal and lies on the Tagus."],
                "statements": [
                    "Lisbon is Portugal's capital.",
                    "Lisbon has two million inhabitants.",
                ],
            },
            {
                "verdicts": [
                    {
                        "statement": "Lisbon is Portugal's capital.",
                        "reason": "stated in the context",
                        "verdict": True,
                    },
                    {
                        "statement": "Lisbon has two million inhabitants.",
                        "reason": "the context gives no population",
                        "verdict": False,
                    },
                ]
            },
        ),
    ],
)


class Faithfulness(LLMMetric):
    """RAGAS Faithfulness: supported / judged statements of the response (2 calls).

    As in RAGAS the share is over the verdicts the judge returned, so a reply judging
    fewer statements than it was given still scores (the shortfall is in the reason).
    """

    name = "faithfulness"
    required_columns = ("user_input", "response", "retrieved_contexts")
    prompts: ClassVar[dict[str, Prompt]] = {
        "statements": STATEMENTS_PROMPT,
        "verdicts": SUPPORT_PROMPT,
    }

    @staticmethod
    def _compute_score(verdicts: Sequence[bool]) -> float:
        """Share of statements the contexts support; NaN with no statements."""
        return sum(map(bool, verdicts)) / len(verdicts) if verdicts else float("nan")

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        first = await self.ask(
            "statements", {"question": sample.user_input, "answer": sample.response}, Statements
        )
        if not first.ok:
            return failed(first)
        statements = list(first.output.statements)
        if not statements:
            return nan("no statement could be extracted from the response", llm_calls=first.calls)
        second = await self.ask(
            "verdicts",
            {"contexts": sample.retrieved_contexts, "statements": statements},
            SupportVerdicts,
        )
        if not second.ok:
            return failed(first, second, statements=statements)
        flags = [v.verdict for v in second.output.verdicts]
        details = {
            "statements": statements,
            "verdicts": [
                {"statement": v.statement, "verdict": v.verdict, "reason": v.reason}
                for v in second.output.verdicts
            ],
            "llm_calls": calls(first, second),
        }
        if not flags:
            return nan("the judge returned no verdict", **details)
        short = f" (the judge returned {len(flags)} for {len(statements)})" * (
            len(flags) != len(statements)
        )
        return MetricResult(
            self._compute_score(flags),
            f"{sum(flags)} of {len(flags)} verdicts supported by the contexts{short}",
            details,
        )


class GroundednessRating(BaseModel):
    rating: int = Field(ge=0, le=2, description="0 not grounded, 1 partly, 2 fully grounded")


GROUNDED_JUDGE_1 = Prompt(
    name="nv_response_groundedness.judge1",
    instruction=(
        "Check the response against the contexts. Rate 2 if every claim in the response is "
        "backed by the contexts, 1 if only some claims are, 0 if none are or the response "
        "contradicts them. Judge only from the contexts, not from what you know."
    ),
    examples=[
        (
            {
                "response": "Mercury is the closest planet to the Sun.",
                "contexts": ["Mercury orbits nearest to the Sun of all planets."],
            },
            {"rating": 2},
        ),
    ],
)
GROUNDED_JUDGE_2 = Prompt(
    name="nv_response_groundedness.judge2",
    instruction=(
        "You audit an assistant's answer. Could someone holding only the given passages have "
        "written it? Score 0 when the answer is unsupported by the passages, 1 when it is "
        "partly supported, 2 when all of it is supported. Do not use outside knowledge."
    ),
    examples=[
        (
            {
                "response": "Mercury has three moons.",
                "contexts": ["Mercury orbits nearest to the Sun of all planets."],
            },
            {"rating": 0},
        ),
    ],
)


class ResponseGroundedness(DualJudgeMetric):
    """RAGAS ResponseGroundedness: two 0/1/2 judges, mean of rating/2 (one failure tolerated)."""

    name = "nv_response_groundedness"
    required_columns = ("response", "retrieved_contexts")
    prompts: ClassVar[dict[str, Prompt]] = {"judge1": GROUNDED_JUDGE_1, "judge2": GROUNDED_JUDGE_2}
    rating_model = GroundednessRating
    scale = 2.0

    def precheck(self, sample: SingleTurnSample) -> MetricResult | None:
        response = (sample.response or "").strip()
        joined = join_contexts(sample.retrieved_contexts or []).strip()
        if not response or not joined:
            return decided(0.0, "response or contexts are blank (RAGAS rule: 0)")
        if response in joined:
            return decided(1.0, "the response is quoted from the contexts (RAGAS rule: 1)")
        return None

    def judge_inputs(self, sample: SingleTurnSample) -> tuple[dict[str, Any], dict[str, Any]]:
        inputs = {"response": sample.response, "contexts": sample.retrieved_contexts}
        return inputs, inputs
