"""RAGAS ContextEntityRecall: how many of the reference's entities the contexts contain."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar

from pydantic import BaseModel

from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import LLMMetric, calls, failed, join_contexts
from ragloop.eval.metrics.base import MetricResult, nan
from ragloop.eval.schema import SingleTurnSample


class Entities(BaseModel):
    entities: list[str]


ENTITIES_PROMPT = Prompt(
    name="context_entity_recall.entities",
    instruction=(
        "List the named entities in the text: people, places, organisations, dates, numbers "
        "with units, works and events. Write each once, as it appears in the text."
    ),
    examples=[
        (
            {"text": "Marie Curie won the Nobel Prize in Physics in 1903 in Stockholm."},
            {"entities": ["Marie Curie", "Nobel Prize in Physics", "1903", "Stockholm"]},
        ),
    ],
)


def _norm(entity: str) -> str:
    return " ".join(entity.casefold().split())


class ContextEntityRecall(LLMMetric):
    """RAGAS ContextEntityRecall: |entities(context) ∩ entities(reference)| / |entities(reference)|.

    Entities are matched after case-folding and collapsing spaces. With no entity in the
    reference the score is NaN with a reason (RAGAS would return 0).
    """

    name = "context_entity_recall"
    required_columns = ("reference", "retrieved_contexts")
    prompts: ClassVar[dict[str, Prompt]] = {"entities": ENTITIES_PROMPT}

    @staticmethod
    def _compute_score(reference_entities: Sequence[str], context_entities: Sequence[str]) -> float:
        """Share of the reference's entities also found in the contexts."""
        ref = {_norm(e) for e in reference_entities if e.strip()}
        ctx = {_norm(e) for e in context_entities if e.strip()}
        return len(ref & ctx) / len(ref) if ref else float("nan")

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        joined = join_contexts(sample.retrieved_contexts or [])
        ref, ctx = await asyncio.gather(
            self.ask("entities", {"text": sample.reference}, Entities),
            self.ask("entities", {"text": joined}, Entities),
        )
        if not (ref.ok and ctx.ok):
            return failed(ref, ctx)
        value = self._compute_score(ref.output.entities, ctx.output.entities)
        details = {
            "reference_entities": ref.output.entities,
            "context_entities": ctx.output.entities,
            "llm_calls": calls(ref, ctx),
        }
        if math.isnan(value):
            return nan("the judge found no entity in the reference", **details)
        found = {_norm(e) for e in ref.output.entities} & {_norm(e) for e in ctx.output.entities}
        return MetricResult(
            value, f"{len(found)} reference entities found in the contexts", details
        )
