"""RAGAS TopicAdherenceScore over a conversation, and an offline variant on embeddings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel

from ragloop.errors import ConfigError
from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import MultiTurnLLMMetric, calls, expect_length, failed
from ragloop.eval.metrics.base import MetricResult, MultiTurnMetric
from ragloop.eval.metrics.offline import is_noncommittal
from ragloop.eval.metrics.semantic import unit_vectors
from ragloop.eval.schema import MultiTurnSample

Mode = Literal["precision", "recall", "f1"]
MODES: tuple[str, ...] = ("precision", "recall", "f1")


def adherence(answered: Sequence[bool], on_topic: Sequence[bool], mode: str) -> float:
    """RAGAS's formula: TP = answered and on topic, FP = answered off topic, FN = refused on topic.

    Precision = TP/(TP+FP), recall = TP/(TP+FN), F1 their harmonic mean, each with
    RAGAS's 1e-10 in the denominator (so no topic at all scores 0).
    """
    a, o = np.asarray(answered, dtype=bool), np.asarray(on_topic, dtype=bool)
    tp, fp, fn = int((a & o).sum()), int((a & ~o).sum()), int((~a & o).sum())
    precision = tp / (tp + fp + 1e-10)
    recall = tp / (tp + fn + 1e-10)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 2 * precision * recall / (precision + recall + 1e-10)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")


class Topics(BaseModel):
    topics: list[str]


class Refusals(BaseModel):
    refused: list[bool]


class TopicClasses(BaseModel):
    classifications: list[bool]


TOPICS_PROMPT = Prompt(
    name="topic_adherence.topics",
    instruction=(
        "Read the conversation between a human and an AI and list the topics the human "
        "raised, each as a short noun phrase, in the order they came up."
    ),
    examples=[
        (
            {"conversation": "Human: How do I repot a fern?\nAI: Use a wider pot ..."},
            {"topics": ["repotting a fern"]},
        )
    ],
)
REFUSED_PROMPT = Prompt(
    name="topic_adherence.refused",
    instruction=(
        "For each topic, in the order given, say whether the AI in the conversation refused "
        "or failed to answer about it (true) or answered it (false). One value per topic."
    ),
    examples=[
        (
            {
                "conversation": "Human: Tell me a joke. And what is my bank PIN?\nAI: Why did "
                "the chicken ... I cannot help with your PIN.",
                "topics": ["a joke", "the user's bank PIN"],
            },
            {"refused": [False, True]},
        )
    ],
)
CLASSIFY_PROMPT = Prompt(
    name="topic_adherence.classify",
    instruction=(
        "For each topic, in the order given, say whether it falls under any of the "
        "reference topics (true) or not (false). One value per topic."
    ),
    examples=[
        (
            {"reference_topics": ["gardening"], "topics": ["repotting a fern", "tax law"]},
            {"classifications": [True, False]},
        )
    ],
)


class TopicAdherence(MultiTurnLLMMetric):
    """RAGAS ``topic_adherence``: does the AI answer on-topic questions and only those?

    Topics are extracted from the conversation (call 1); whether the AI answered each one
    is judged in one batched call (RAGAS asks once per topic); each topic is classified
    against ``reference_topics`` (call 3). ``mode`` is precision, recall or f1 (default).
    """

    name = "topic_adherence"
    required_columns = ("user_input", "reference_topics")
    prompts: ClassVar[dict[str, Prompt]] = {
        "topics": TOPICS_PROMPT,
        "refused": REFUSED_PROMPT,
        "classify": CLASSIFY_PROMPT,
    }
    mode: str = "f1"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        _check_mode(self.mode)

    async def _multi_turn_ascore(self, sample: MultiTurnSample) -> MetricResult:
        transcript = sample.pretty_repr()
        first = await self.ask("topics", {"conversation": transcript}, Topics)
        if not first.ok:
            return failed(first)
        topics = list(first.output.topics)
        if not topics:
            details = {"topics": [], "llm_calls": calls(first)}
            return MetricResult(0.0, "no topic found in the conversation", details)
        refused = await self.ask(
            "refused",
            {"conversation": transcript, "topics": topics},
            Refusals,
            check=expect_length(len(topics), "refused"),
        )
        classes = await self.ask(
            "classify",
            {"reference_topics": sample.reference_topics, "topics": topics},
            TopicClasses,
        )
        if not (refused.ok and classes.ok):
            return failed(first, refused, classes)
        answered = [not r for r in refused.output.refused]
        on_topic = (list(classes.output.classifications) + [False] * len(topics))[: len(topics)]
        value = adherence(answered, on_topic, self.mode)
        details = {
            "topics": topics,
            "answered": answered,
            "on_topic": on_topic,
            "llm_calls": calls(first, refused, classes),
        }
        reason = f"{sum(answered)} of {len(topics)} topics answered, {sum(on_topic)} on topic"
        return MetricResult(value, reason, details)


class OfflineTopicAdherence(MultiTurnMetric):
    """Offline stand-in for ``topic_adherence`` (no LLM): each human turn is a topic.

    A turn is answered unless the AI's reply to it is noncommittal (the rule the offline
    answer relevancy uses); it is on topic when its embedding's cosine to some reference
    topic reaches ``threshold``. Same precision/recall/F1 formula as RAGAS.
    """

    name = "offline_topic_adherence"
    required_columns = ("user_input", "reference_topics")
    needs_embeddings = True
    mode: str = "f1"
    threshold: float = 0.5

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        _check_mode(self.mode)
        if not -1.0 <= float(self.threshold) <= 1.0:
            raise ConfigError(f"threshold must be within [-1, 1]; got {self.threshold!r}")

    @staticmethod
    def turns(sample: MultiTurnSample) -> list[tuple[str, str]]:
        """(human text, the AI's last text reply before the next human turn) pairs."""
        pairs: list[list[str]] = []
        for message in sample.user_input or []:
            if message.type == "human":
                pairs.append([message.content, ""])
            elif message.type == "ai" and pairs and message.content.strip():
                pairs[-1][1] = message.content
        return [(q, a) for q, a in pairs]

    async def _ascore(self, sample: MultiTurnSample) -> MetricResult:
        assert self.embeddings is not None
        turns = self.turns(sample)
        refs = list(sample.reference_topics or [])
        if not turns or not refs:
            return MetricResult(0.0, "no human turn or no reference topic", {"llm_calls": 0})
        vecs = await unit_vectors(self.embeddings, [q for q, _ in turns] + refs)
        sims = vecs[: len(turns)] @ vecs[len(turns) :].T
        best = sims.max(axis=1)
        on_topic = [bool(b >= self.threshold) for b in best]
        answered = [bool(a.strip()) and not is_noncommittal(a) for _, a in turns]
        value = adherence(answered, on_topic, self.mode)
        details = {"best_similarity": best.tolist(), "answered": answered, "on_topic": on_topic}
        reason = f"{sum(answered)} of {len(turns)} turns answered, {sum(on_topic)} on topic"
        return MetricResult(value, reason, details)
