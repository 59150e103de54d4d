"""LLM-judged context metrics: ContextRelevance, LLM context recall and precision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._aggregate import average_precision
from ragloop.eval.metrics._llm import (
    DualJudgeMetric,
    LLMMetric,
    calls,
    decided,
    expect_length,
    failed,
    join_contexts,
)
from ragloop.eval.metrics.base import MetricResult, nan
from ragloop.eval.schema import SingleTurnSample

# --- ContextRelevance (`nv_context_relevance`) ----------------------------------------------


class RelevanceRating(BaseModel):
    rating: int = Field(ge=0, le=2, description="0 irrelevant, 1 partly, 2 relevant (all contexts)")
    per_context: list[int] | None = Field(
        default=None, description="the same 0/1/2 rating for each context, in order"
    )


_PER_CONTEXT = (
    " Give 'rating' for the contexts taken together, and in 'per_context' the same 0/1/2 "
    "rating for each context on its own, in the order given."
)
RELEVANCE_JUDGE_1 = Prompt(
    name="nv_context_relevance.judge1",
    instruction=(
        "You grade retrieved contexts for a question. Decide whether the contexts hold "
        "information that answers the question, using only the question and the contexts, "
        "never your own knowledge. Rate 0 when nothing in them bears on the question, 1 when "
        "they answer part of it, 2 when they hold relevant information that answers it."
        + _PER_CONTEXT
    ),
    examples=[
        (
            {
                "question": "Who painted the Night Watch?",
                "contexts": [
                    "The Night Watch was painted by Rembrandt in 1642.",
                    "Tulips bloom in April.",
                ],
            },
            {"rating": 2, "per_context": [2, 0]},
        ),
    ],
)
RELEVANCE_JUDGE_2 = Prompt(
    name="nv_context_relevance.judge2",
    instruction=(
        "Imagine a reader who sees only these passages and the question. How far could the "
        "passages, read literally, take that reader toward an answer? Score 0 if they offer "
        "nothing relevant, 1 if they cover only some of what is asked, 2 if they supply the "
        "relevant information. Ignore anything you know that the passages do not say."
        + _PER_CONTEXT
    ),
    examples=[
        (
            {
                "question": "What is the boiling point of water at sea level?",
                "contexts": ["Mountain climbers cook pasta longer."],
            },
            {"rating": 0, "per_context": [0]},
        ),
    ],
)


class ContextRelevance(DualJudgeMetric):
    """RAGAS ContextRelevance: two different 0/1/2 judges, score = mean(r1/2, r2/2).

    As in RAGAS, a judge whose reply is unusable is left out (the other one decides) and
    NaN comes only when both fail. The judges also rate each context, kept in
    ``details['per_context']`` (0..1) so the graph can drop a bad chunk.
    """

    name = "nv_context_relevance"
    required_columns = ("user_input", "retrieved_contexts")
    prompts: ClassVar[dict[str, Prompt]] = {
        "judge1": RELEVANCE_JUDGE_1,
        "judge2": RELEVANCE_JUDGE_2,
    }
    rating_model = RelevanceRating
    scale = 2.0

    def precheck(self, sample: SingleTurnSample) -> MetricResult | None:
        question = (sample.user_input or "").strip()
        joined = join_contexts(sample.retrieved_contexts or []).strip()
        if not question or not joined:
            return decided(0.0, "question or contexts are blank (RAGAS rule: 0)")
        if joined in question:
            return decided(0.0, "the contexts only repeat the question (RAGAS rule: 0)")
        return None

    def judge_inputs(self, sample: SingleTurnSample) -> tuple[dict[str, Any], dict[str, Any]]:
        inputs = {"question": sample.user_input, "contexts": sample.retrieved_contexts}
        return inputs, inputs

    def extra_details(self, sample: SingleTurnSample, ok: list[BaseModel]) -> dict[str, Any]:
        n = len(sample.retrieved_contexts or [])
        lists = [getattr(o, "per_context", None) for o in ok]
        per = [p for p in lists if p and len(p) == n]
        if not per:
            return {"per_context": None}
        return {
            "per_context": [
                sum(min(max(p[i], 0), 2) for p in per) / (2 * len(per)) for i in range(n)
            ]
        }


# --- LLMContextRecall (`context_recall`) -----------------------------------------------------


class Attribution(BaseModel):
    statement: str
    reason: str = ""
    attributed: bool


class Attributions(BaseModel):
    classifications: list[Attribution]


RECALL_PROMPT = Prompt(
    name="context_recall.attribution",
    instruction=(
        "Split the reference answer into its individual statements (one claim each). For each "
        "statement decide whether the retrieved contexts support it: attributed true when the "
        "information can be found in or directly inferred from the contexts, false otherwise. "
        "Add a short reason."
    ),
    examples=[
        (
            {
                "question": "Where and when was the Eiffel Tower built?",
                "contexts": ["The Eiffel Tower stands in Paris."],
                "reference": "The Eiffel Tower was built in Paris. It was finished in 1889.",
            },
            {
                "classifications": [
                    {
                        "statement": "The Eiffel Tower was built in Paris.",
                        "reason": "the context places it in Paris",
                        "attributed": True,
                    },
                    {
                        "statement": "It was finished in 1889.",
                        "reason": "no date in the context",
                        "attributed": False,
                    },
                ]
            },
        ),
    ],
)


class LLMContextRecall(LLMMetric):
    """RAGAS LLMContextRecall: share of reference statements the contexts support (1 call)."""

    name = "context_recall"
    required_columns = ("user_input", "retrieved_contexts", "reference")
    prompts: ClassVar[dict[str, Prompt]] = {"attribution": RECALL_PROMPT}

    @staticmethod
    def _compute_score(attributed: Sequence[bool]) -> float:
        """Attributed statements / statements; NaN with no statements."""
        return sum(map(bool, attributed)) / len(attributed) if attributed else float("nan")

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        inputs = {
            "question": sample.user_input,
            "contexts": sample.retrieved_contexts,
            "reference": sample.reference,
        }
        res = await self.ask("attribution", inputs, Attributions)
        if not res.ok:
            return failed(res)
        items = res.output.classifications
        if not items:
            return nan("the judge found no statement in the reference", llm_calls=res.calls)
        flags = [c.attributed for c in items]
        details = {"classifications": [c.model_dump() for c in items], "llm_calls": calls(res)}
        return MetricResult(
            self._compute_score(flags),
            f"{sum(flags)} of {len(flags)} reference statements supported by the contexts",
            details,
        )


# --- LLMContextPrecisionWithReference ---------------------------------------------------------


class Usefulness(BaseModel):
    reason: str = ""
    useful: bool


class UsefulnessVerdicts(BaseModel):
    verdicts: list[Usefulness]


PRECISION_PROMPT = Prompt(
    name="llm_context_precision_with_reference.verdicts",
    instruction=(
        "For each context, in the order given, decide whether it was useful in arriving at "
        "the reference answer to the question: useful true or false, with a short reason. "
        "Return exactly one verdict per context."
    ),
    examples=[
        (
            {
                "question": "What is the capital of Japan?",
                "reference": "Tokyo is Japan's capital.",
                "contexts": [
                    "Tokyo has been the seat of government since 1868.",
                    "Sushi is popular.",
                ],
            },
            {
                "verdicts": [
                    {"reason": "names Tokyo as the seat of government", "useful": True},
                    {"reason": "about food, not the capital", "useful": False},
                ]
            },
        ),
    ],
)


class LLMContextPrecisionWithReference(LLMMetric):
    """RAGAS context precision: average precision of per-context usefulness verdicts.

    RAGAS asks once per context; one call judges every context here, same formula.
    """

    name = "llm_context_precision_with_reference"
    required_columns = ("user_input", "retrieved_contexts", "reference")
    prompts: ClassVar[dict[str, Prompt]] = {"verdicts": PRECISION_PROMPT}

    @staticmethod
    def _compute_score(useful: Sequence[bool]) -> float:
        """Mean of precision@k over the ranks k holding a useful context (0 when none is)."""
        return average_precision(list(useful))

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        contexts = list(sample.retrieved_contexts or [])
        if not contexts:
            return decided(0.0, "no retrieved contexts: average precision 0 (as in RAGAS)")
        inputs = {
            "question": sample.user_input,
            "reference": sample.reference,
            "contexts": contexts,
        }
        res = await self.ask(
            "verdicts", inputs, UsefulnessVerdicts, check=expect_length(len(contexts), "verdicts")
        )
        if not res.ok:
            return failed(res)
        flags = [v.useful for v in res.output.verdicts]
        details = {
            "verdicts": [v.model_dump() for v in res.output.verdicts],
            "llm_calls": calls(res),
        }
        return MetricResult(
            self._compute_score(flags),
            f"{sum(flags)} of {len(flags)} contexts useful; average precision over their ranks",
            details,
        )
