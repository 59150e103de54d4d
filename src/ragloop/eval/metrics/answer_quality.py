"""Answer quality against a reference: RAGAS AnswerAccuracy and AnswerCorrectness."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator

from ragloop.errors import ConfigError
from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import DualJudgeMetric, LLMMetric, calls, failed
from ragloop.eval.metrics.base import MetricResult, nan
from ragloop.eval.metrics.faithfulness import STATEMENTS_PROMPT, Statements
from ragloop.eval.metrics.semantic import ragas_cosine
from ragloop.eval.schema import SingleTurnSample

# --- AnswerAccuracy (`nv_accuracy`) ---------------------------------------------------------


class AccuracyRating(BaseModel):
    rating: int = Field(description="0 no match, 2 partial match, 4 full match")

    @field_validator("rating")
    @classmethod
    def _levels(cls, value: int) -> int:
        if value not in (0, 2, 4):
            raise ValueError("rating must be 0, 2 or 4")
        return value


ACCURACY_JUDGE_1 = Prompt(
    name="nv_accuracy.judge1",
    instruction=(
        "Compare the user answer with the reference answer to the question. Rate 4 if they "
        "say the same thing, 2 if the user answer matches only part of the reference, 0 if "
        "it does not match or is wrong. Wording may differ; meaning is what counts."
    ),
    examples=[
        (
            {
                "question": "How many legs does a spider have?",
                "user_answer": "Eight.",
                "reference_answer": "Spiders have eight legs.",
            },
            {"rating": 4},
        ),
    ],
)
ACCURACY_JUDGE_2 = Prompt(
    name="nv_accuracy.judge2",
    instruction=(
        "Take the reference answer as ground truth. Does the user answer convey it? Give 0 "
        "for an answer that contradicts it or misses it, 2 for one that conveys some of it, "
        "4 for one that conveys all of it. Ignore style and length."
    ),
    examples=[
        (
            {
                "question": "Which gas do plants take in for photosynthesis?",
                "user_answer": "Oxygen.",
                "reference_answer": "Carbon dioxide.",
            },
            {"rating": 0},
        ),
    ],
)


class AnswerAccuracy(DualJudgeMetric):
    """RAGAS AnswerAccuracy: two 0/2/4 judges (the second with the answers swapped), mean of /4."""

    name = "nv_accuracy"
    required_columns = ("user_input", "response", "reference")
    prompts: ClassVar[dict[str, Prompt]] = {"judge1": ACCURACY_JUDGE_1, "judge2": ACCURACY_JUDGE_2}
    rating_model = AccuracyRating
    scale = 4.0

    def judge_inputs(self, sample: SingleTurnSample) -> tuple[dict[str, Any], dict[str, Any]]:
        q, resp, ref = sample.user_input, sample.response, sample.reference
        return (
            {"question": q, "user_answer": resp, "reference_answer": ref},
            {"question": q, "user_answer": ref, "reference_answer": resp},
        )


# --- AnswerCorrectness ------------------------------------------------------------------------


class Classified(BaseModel):
    statement: str
    reason: str = ""


class Classification(BaseModel):
    TP: list[Classified] = Field(
        default_factory=list, description="answer statements the reference supports"
    )
    FP: list[Classified] = Field(
        default_factory=list, description="answer statements the reference lacks"
    )
    FN: list[Classified] = Field(
        default_factory=list, description="reference statements the answer lacks"
    )


CLASSIFY_PROMPT = Prompt(
    name="answer_correctness.classify",
    instruction=(
        "Sort the statements: TP = answer statements backed by the reference statements; "
        "FP = answer statements the reference does not back; FN = reference statements the "
        "answer does not cover. Every statement goes in exactly one list, with a short reason."
    ),
    examples=[
        (
            {
                "question": "What does the heart do?",
                "answer": ["The heart pumps blood.", "The heart is a bone."],
                "reference": ["The heart pumps blood.", "The heart is a muscle."],
            },
            {
                "TP": [{"statement": "The heart pumps blood.", "reason": "same as the reference"}],
                "FP": [
                    {"statement": "The heart is a bone.", "reason": "the reference says muscle"}
                ],
                "FN": [{"statement": "The heart is a muscle.", "reason": "not in the answer"}],
            },
        ),
    ],
)


def f_beta(tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """F-beta of statement counts as RAGAS computes it: an empty precision or recall is 0."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    if precision == 0 and recall == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


class AnswerCorrectness(LLMMetric):
    """RAGAS AnswerCorrectness: weighted mean of the statement F-beta and the cosine.

    Default weights (0.75, 0.25), beta 1. Statements of response and reference come from
    two parallel calls, the TP/FP/FN sort from a third; when neither text yields a
    statement the F-beta is 1.0 and the third call is skipped (RAGAS's rule). The cosine
    is not floored, so a negative similarity lowers the score below what F-beta alone
    gives; a zero embedding makes the score NaN, as in RAGAS. Embeddings are needed only
    when the similarity weight is > 0. The range is therefore [-1, 1] (with the default
    weights [-0.25, 1]), like the other metrics built on an unclamped cosine.
    """

    name = "answer_correctness"
    required_columns = ("user_input", "response", "reference")
    value_range = (-1.0, 1.0)
    needs_embeddings = True
    prompts: ClassVar[dict[str, Prompt]] = {
        "statements": STATEMENTS_PROMPT,
        "classify": CLASSIFY_PROMPT,
    }
    weights: tuple[float, float] = (0.75, 0.25)
    beta: float = 1.0

    def __init__(
        self, *, weights: Sequence[float] = (0.75, 0.25), beta: float = 1.0, **kwargs: Any
    ):
        w = tuple(float(x) for x in weights)
        if len(w) != 2 or any(x < 0 for x in w) or sum(w) == 0:
            raise ConfigError(
                f"weights must be two non-negative numbers (factuality, similarity), not both 0; "
                f"got {weights!r}"
            )
        if beta <= 0:
            raise ConfigError(f"beta must be > 0 (>1 favours recall, <1 precision); got {beta!r}")
        self.weights, self.beta = (w[0], w[1]), float(beta)
        self.needs_embeddings = w[1] > 0  # type: ignore[misc]
        super().__init__(**kwargs)

    def _compute_score(self, f_score: float, similarity: float) -> float:
        """Weighted mean of the F-beta and the similarity (NaN when the similarity is)."""
        w_f, w_s = self.weights
        return (w_f * f_score + w_s * similarity) / (w_f + w_s)

    async def _similarity(self, sample: SingleTurnSample) -> float:
        if self.weights[1] == 0:
            return 0.0
        assert self.embeddings is not None
        v_ref = await self.embeddings.aembed_query(sample.reference or " ")
        v_resp = await self.embeddings.aembed_query(sample.response or " ")
        return ragas_cosine(v_ref, v_resp)

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        q = sample.user_input
        resp, ref = await asyncio.gather(
            self.ask("statements", {"question": q, "answer": sample.response}, Statements),
            self.ask("statements", {"question": q, "answer": sample.reference}, Statements),
        )
        if not (resp.ok and ref.ok):
            return failed(resp, ref)
        answer, truth = list(resp.output.statements), list(ref.output.statements)
        judged = [resp, ref]
        classification: dict[str, Any] | None = None
        if not answer and not truth:
            f_score, counts = 1.0, "no statement on either side: F=1 (RAGAS rule)"
        else:
            cls = await self.ask(
                "classify", {"question": q, "answer": answer, "reference": truth}, Classification
            )
            judged.append(cls)
            if not cls.ok:
                return failed(*judged)
            c = cls.output
            classification = c.model_dump()
            tp, fp, fn = len(c.TP), len(c.FP), len(c.FN)
            f_score, counts = f_beta(tp, fp, fn, self.beta), f"TP={tp} FP={fp} FN={fn}"
        similarity = await self._similarity(sample)
        details = {
            "response_statements": answer,
            "reference_statements": truth,
            "classification": classification,
            "f_score": f_score,
            "similarity": similarity,
            "llm_calls": calls(*judged),
        }
        value = self._compute_score(f_score, similarity)
        if math.isnan(value):
            return nan("response or reference embeds to the zero vector", **details)
        return MetricResult(value, f"{counts}, similarity {similarity:.3f}", details)
