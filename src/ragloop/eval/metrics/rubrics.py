"""RAGAS RubricsScore: a 1-5 grade of the response against five rubric descriptions."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ragloop.errors import ConfigError
from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import LLMMetric, calls, failed
from ragloop.eval.metrics.base import MetricResult
from ragloop.eval.schema import MultiTurnSample, SingleTurnSample

#: five default levels (reference-free); a sample's own ``rubrics`` replace them
DEFAULT_RUBRICS: dict[str, str] = {
    "score1_description": "Wrong or off-topic: the response does not answer what was asked.",
    "score2_description": "Answers part of the question but with serious errors or large gaps.",
    "score3_description": "Mostly right, but unclear, incomplete or missing useful detail.",
    "score4_description": "Right and clear, with only small gaps or slight imprecision.",
    "score5_description": "Fully right, clear and complete, answering the question directly.",
}


class RubricScore(BaseModel):
    feedback: str = ""
    score: int = Field(ge=1, le=5)


RUBRIC_PROMPT = Prompt(
    name="rubrics_score",
    instruction=(
        "Score the response (for a conversation: the assistant's part of it) from 1 to 5 using "
        "only the scoring rubric below, and explain the score in one or two sentences of "
        "feedback. Use the reference and contexts when given."
    ),
)


class RubricsScore(LLMMetric):
    """RAGAS RubricsScore (``domain_specific_rubrics``): a 1-5 score against rubric levels.

    Scores a single-turn sample or a whole conversation (RAGAS's multi-turn form, shown
    to the judge as its transcript). The sample's ``rubrics`` override the metric's.
    ``rubrics_score`` is the older ragloop name of the same metric.

    ``rubrics_reference`` (multi-turn only): True (ragloop's default) shows the judge the
    sample's ``reference`` beside the conversation; False grades the conversation alone,
    as RAGAS 0.4.3 does (its multi-turn prompt input carries the transcript only), so
    scores match RAGAS's. Single-turn samples always show the reference, as RAGAS does.
    """

    name = "domain_specific_rubrics"
    aliases = ("rubrics_score",)
    multi_turn = None
    required_columns = ("user_input", "response")
    output_type = "discrete"
    value_range = (1.0, 5.0)
    prompts: ClassVar[dict[str, Prompt]] = {"score": RUBRIC_PROMPT}
    rubrics: dict[str, str] = DEFAULT_RUBRICS
    rubrics_reference: bool = True

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(self.rubrics, dict) or not self.rubrics:
            raise ConfigError("rubrics must be a non-empty dict like {'score1_description': ...}")
        self.rubrics = dict(self.rubrics)
        if not isinstance(self.rubrics_reference, bool):
            raise ConfigError("rubrics_reference must be True (show the reference) or False")

    @staticmethod
    def _compute_score(score: int) -> float:
        """The judge's level, as a float in [1, 5]."""
        return float(min(max(score, 1), 5))

    def missing_columns(self, sample: Any) -> list[str]:
        if isinstance(sample, MultiTurnSample):
            return [] if sample.user_input is not None else ["user_input"]
        return super().missing_columns(sample)

    async def _ascore(self, sample: Any) -> MetricResult:
        if isinstance(sample, MultiTurnSample):
            inputs: dict[str, Any] = {"conversation": sample.pretty_repr()}
            if sample.reference and self.rubrics_reference:
                inputs["reference"] = sample.reference
            return await self._grade(inputs, sample.rubrics)
        return await self._single_turn_ascore(sample)

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        inputs: dict[str, Any] = {"question": sample.user_input, "response": sample.response}
        if sample.reference:
            inputs["reference"] = sample.reference
        if sample.retrieved_contexts:
            inputs["contexts"] = sample.retrieved_contexts
        return await self._grade(inputs, sample.rubrics)

    async def _grade(self, inputs: dict[str, Any], own: dict[str, str] | None) -> MetricResult:
        rubrics = own or self.rubrics
        base = self.prompts["score"]
        lines = "\n".join(f"{key}: {text}" for key, text in rubrics.items())
        prompt = base.with_instruction(f"{base.instruction}\n\nScoring rubric:\n{lines}")
        res = await self.ask("score", inputs, RubricScore, prompt=prompt)
        if not res.ok:
            return failed(res)
        details = {"feedback": res.output.feedback, "rubrics": rubrics, "llm_calls": calls(res)}
        return MetricResult(
            self._compute_score(res.output.score),
            res.output.feedback or f"rubric level {res.output.score}",
            details,
        )
