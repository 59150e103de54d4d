"""RAGAS ContextEntityRecall: how many of the reference's entities the contexts contain."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from pydantic import BaseModel

from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import LLMMetric, calls, failed, join_contexts
from ragloop.eval.metrics.base import MetricResult
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


class ContextEntityRecall(LLMMetric):
    """RAGAS ContextEntityRecall: |set(context entities) ∩ set(reference entities)| / n_ref.

    As in RAGAS entities match exactly as the judge wrote them (no case-folding), and the
    denominator counts the reference entities as returned, repeats included; a reference
    with no entity scores 0.0.
    """

    name = "context_entity_recall"
    required_columns = ("reference", "retrieved_contexts")
    prompts: ClassVar[dict[str, Prompt]] = {"entities": ENTITIES_PROMPT}

    @staticmethod
    def _compute_score(reference_entities: Sequence[str], context_entities: Sequence[str]) -> float:
        """Share of the reference's entities also found in the contexts (RAGAS's epsilon)."""
        both = set(context_entities) & set(reference_entities)
        return len(both) / (len(reference_entities) + 1e-8)

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        joined = join_contexts(sample.retrieved_contexts or [])
        ref, ctx = await asyncio.gather(
            self.ask("entities", {"text": sample.reference}, Entities),
            self.ask("entities", {"text": joined}, Entities),
        )
        if not (ref.ok and ctx.ok):
            return failed(ref, ctx)
        value = self._compute_score(ref.output.entities, ctx.output.entities)
        found = set(ref.output.entities) & set(ctx.output.entities)
        details = {
            "reference_entities": ref.output.entities,
            "context_entities": ctx.output.entities,
            "llm_calls": calls(ref, ctx),
        }
        reason = f"{len(found)} of {len(ref.output.entities)} reference entities in the contexts"
        return MetricResult(value, reason, details)
