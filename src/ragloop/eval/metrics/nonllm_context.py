"""RAGAS' non-LLM context recall and precision: string similarity against reference contexts."""

from __future__ import annotations

from typing import Any, ClassVar

from ragloop.errors import ConfigError
from ragloop.eval.metrics._aggregate import average_precision
from ragloop.eval.metrics.base import MetricResult, SingleTurnMetric, nan
from ragloop.eval.metrics.traditional import DistanceMeasure, similarity_fn
from ragloop.eval.schema import SingleTurnSample


class _ContextStringMetric(SingleTurnMetric):
    """Shared setup: a rapidfuzz similarity and a threshold in [0, 1]."""

    required_columns: ClassVar[tuple[str, ...]] = ("retrieved_contexts", "reference_contexts")
    distance_measure: DistanceMeasure | str = DistanceMeasure.LEVENSHTEIN
    threshold: float = 0.5

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._similarity = similarity_fn(self.distance_measure)
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ConfigError(f"threshold must be within [0, 1]; got {self.threshold!r}")

    def _best(self, text: str, others: list[str]) -> float:
        """Highest similarity of ``text`` to any of ``others`` (``others`` is not empty)."""
        return max(float(self._similarity(other, text)) for other in others)


class NonLLMContextRecall(_ContextStringMetric):
    """Share of reference contexts recalled: best similarity to a retrieved one > threshold.

    The comparison is strict (``>``), as in RAGAS: a similarity of exactly 0.5 is a miss.
    """

    name = "non_llm_context_recall"

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        retrieved = list(sample.retrieved_contexts or [])
        references = list(sample.reference_contexts or [])
        if not references:
            return nan("no reference contexts to recall")
        if not retrieved:
            return nan("no retrieved contexts to compare the reference contexts with")
        best = [self._best(ref, retrieved) for ref in references]
        recalled = [score > self.threshold for score in best]
        return MetricResult(
            sum(recalled) / len(recalled),
            reason=f"{sum(recalled)} of {len(recalled)} reference contexts recalled",
            details={"similarities": best, "recalled": recalled},
        )


class NonLLMContextPrecisionWithReference(_ContextStringMetric):
    """Average precision of retrieved contexts; useful when best similarity >= threshold.

    The comparison is inclusive (``>=``), as in RAGAS: a similarity of exactly 0.5 is useful.
    """

    name = "non_llm_context_precision_with_reference"

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        retrieved = list(sample.retrieved_contexts or [])
        references = list(sample.reference_contexts or [])
        if retrieved and not references:
            return nan("no reference contexts to judge the retrieved contexts against")
        best = [self._best(ctx, references) for ctx in retrieved]
        useful = [int(score >= self.threshold) for score in best]
        return MetricResult(
            average_precision(useful),
            reason=f"{sum(useful)} of {len(useful)} retrieved contexts useful",
            details={"similarities": best, "verdicts": useful},
        )
