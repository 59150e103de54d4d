"""Offline (no-LLM) answer relevancy, context relevance and context recall for the graph.

Each grades by embedding cosine blended with lexical overlap (``semantic.lexical_overlap``):
``sim = w * cos + (1 - w) * overlap``; with no content words on the asking side, ``sim = cos``.

Calibration (WordLlama l2_supercat 256d, hand-made pairs; numbers are blended sims):
- context relevance, w=0.5, 8 questions x (relevant, partial, unrelated) contexts:
  relevant 0.68-0.88, partial 0.09-0.59, unrelated -0.04-0.05 -> grade 2 >= 0.64, 1 >= 0.15.
- context recall, w=0.5, 14 reference sentences vs 3 contexts: supported 0.70-0.96,
  unsupported 0.05-0.47 -> attributed at >= 0.6.
- answer relevancy, w=0.6, the eval_lib seed cases plus 3 more: direct answers 0.69-0.91,
  elaborations 0.02-0.63, on-topic but off-question 0.22-0.52, unrelated < 0.18 ->
  fully/mostly/partial/minor at 0.68/0.62/0.55/0.20. A statement continuing the previous one
  ("It ...", "Then ...", "Click ...") is at most one level below it, so "It is located
  along the Seine." after "The capital of France is Paris." stays relevant (seed: 0.95+).
The same cases separate at the same thresholds on the default MiniLM (int8): checked by
tests/test_metrics_offline.py and printed by bench/embeddings.py (section 3).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.errors import ConfigError
from ragloop.eval.metrics._aggregate import (
    DEFAULT_TEMPERATURE,
    VERDICT_SCORES,
    check_temperature,
    temperature_softmax,
)
from ragloop.eval.metrics.base import MetricResult, SingleTurnMetric, nan
from ragloop.eval.metrics.semantic import blend, blended_similarities, lexical_overlap, unit_vectors
from ragloop.eval.schema import SingleTurnSample
from ragloop.text import split_sentences, tokenize

LEVELS: tuple[str, ...] = tuple(
    sorted(VERDICT_SCORES, key=VERDICT_SCORES.__getitem__, reverse=True)
)

_EVASIVE = re.compile(
    r"\b(?:(?:i|we)\s+(?:do\s*n[o']?t|dont|did\s*n[o']?t)\s+(?:know|have\s+(?:enough\s+)?"
    r"(?:information|data|details|access))|no\s+idea|beyond\s+(?:my|the)\s+(?:knowledge|training)"
    r"|(?:i'm|i\s+am|we're|we\s+are)\s+(?:not\s+(?:sure|certain|aware|able)|unsure|unaware|unable)"
    r"|(?:i|we)\b.{0,20}?(?:can\s*not|can't|could\s*n[o']?t|unable\s+to|not\s+able\s+to)\s+"
    r"(?:find|answer|determine|tell|say|help|provide|locate|confirm|know)"
    r"|cannot\s+be\s+(?:determined|answered|found)"
    r"|(?:not\s+enough|insufficient)\s+(?:information|context|data|details)"
    r"|no\s+(?:relevant\s+)?(?:information|mention|details|data)\s+(?:about|on|regarding|of|in)"
    r"|(?:context|document|text|passage|source|information|article|it)s?\s+(?:does|do)\s*"
    r"(?:n't|\s+not)\s+(?:say|mention|contain|provide|specify|state|include|cover|answer|give)"
    r"|(?:is|are)\s+not\s+(?:mentioned|provided|specified|stated|given|covered)\s+in\s+the\s+"
    r"(?:\w+\s+)?(?:context|document|text|passage|source)s?)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^\s*(?:sorry|i\s+apologi[sz]e|unfortunately|please\s+(?:check|consult|refer|contact|try"
    r"|ask)|i\s+hope|let\s+me\s+know|feel\s+free)\b",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|however|although|though)\b", re.IGNORECASE)
_CONTINUES = re.compile(  # a pronoun in the first four words, or a step/sequence word first
    r"^\W*(?:(?:\S+\s+){0,3}(?:it|its|it's|they|their|them|he|she|his|her|this|these|those)\b"
    r"|(?:that|there|here|then|next|finally|afterwards|once|also|additionally|click|tap|select"
    r"|choose|press|enter|type|open|go|navigate|run|download|install|save|restart|confirm)\b)",
    re.IGNORECASE,
)


def _evasive(statement: str) -> bool:
    """True when the statement evades and no contrast ("..., but X") follows the evasion."""
    match = _EVASIVE.search(statement)
    return bool(match) and not _CONTRAST.search(statement[match.end() :])  # type: ignore[union-attr]


def is_noncommittal(text: str) -> bool:
    """True when the text commits to nothing ("I don't know", "the context does not say").

    Every statement must be evasive or filler (apologies, "please check ..."), and at least
    one evasive; a hedge followed by an answer ("I'm not sure, but it is Paris") commits.
    """
    statements = split_sentences((text or "").replace("\u2019", "'"))
    evasive = [_evasive(s) for s in statements]
    return any(evasive) and all(
        e or _FILLER.search(s) for e, s in zip(evasive, statements, strict=True)
    )


def _unit(value: Any, what: str, low: float = 0.0) -> float:
    if not isinstance(value, int | float) or not low <= float(value) <= 1.0:
        raise ConfigError(f"{what} must be within [{low:g}, 1]; got {value!r}")
    return float(value)


class _OfflineMetric(SingleTurnMetric):
    """Shared checks of the offline metrics: embeddings present, blend weight in [0, 1]."""

    needs_embeddings = True
    embedding_weight: float = 0.5

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        _unit(self.embedding_weight, "embedding_weight")

    @property
    def _emb(self) -> Embeddings:
        assert self.embeddings is not None  # checked in Metric.__init__
        return self.embeddings


class OfflineAnswerRelevancy(_OfflineMetric):
    """Statement-level answer relevancy without an LLM (eval_lib form, DESIGN 5.2).

    Each response sentence gets one of five verdicts from its blended similarity to the
    question; verdict scores are aggregated with the temperature softmax. A noncommittal
    response scores 0.
    """

    name = "offline_answer_relevancy"
    required_columns: ClassVar[tuple[str, ...]] = ("user_input", "response")
    temperature: float = DEFAULT_TEMPERATURE
    embedding_weight: float = 0.6
    verdict_thresholds: tuple[float, float, float, float] = (0.68, 0.62, 0.55, 0.20)

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.temperature = check_temperature(self.temperature)  # ConfigError outside [0, 1]
        t = tuple(_unit(x, "each verdict threshold", -1.0) for x in self.verdict_thresholds)
        if len(t) != 4 or list(t) != sorted(t, reverse=True):
            raise ConfigError(
                "verdict_thresholds must be 4 descending numbers (fully, mostly, partial, minor)"
            )
        self.verdict_thresholds = t  # type: ignore[assignment]

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        question, response = str(sample.user_input), str(sample.response)
        statements = split_sentences(response)
        if is_noncommittal(response):
            return MetricResult(0.0, "noncommittal", {"statements": statements})
        if not statements:
            return nan("response has no statements to grade")
        if not tokenize(question):
            return nan("user_input has no words to compare the response against")
        sims = await blended_similarities(self._emb, question, statements, self.embedding_weight)
        levels: list[int] = []
        for s, sim in zip(statements, sims, strict=True):
            own = next((k for k, t in enumerate(self.verdict_thresholds) if sim >= t), 4)
            if levels and _CONTINUES.match(s):
                own = min(own, levels[-1] + 1)
            levels.append(min(own, len(LEVELS) - 1))
        verdicts = [LEVELS[k] for k in levels]
        value = temperature_softmax([VERDICT_SCORES[v] for v in verdicts], self.temperature)
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in LEVELS if v in verdicts)
        relevant = sum(VERDICT_SCORES[v] >= VERDICT_SCORES["partial"] for v in verdicts)
        return MetricResult(
            value,
            f"{relevant} of {len(verdicts)} statements address the question ({counts}); "
            f"temperature {self.temperature:g}",
            {"statements": statements, "verdicts": verdicts, "similarities": sims},
        )


class OfflineContextRelevance(_OfflineMetric):
    """RAGAS ContextRelevance without an LLM: each context graded 0/1/2, score mean/2."""

    name = "offline_context_relevance"
    required_columns: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts")
    full_threshold: float = 0.64
    partial_threshold: float = 0.15

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        full = _unit(self.full_threshold, "full_threshold", -1.0)
        if _unit(self.partial_threshold, "partial_threshold", -1.0) > full:
            raise ConfigError("partial_threshold must not exceed full_threshold")

    def _to_grade(self, sim: float) -> int:
        return 2 if sim >= self.full_threshold else 1 if sim >= self.partial_threshold else 0

    async def agrade(self, question: str, contexts: list[str]) -> list[int]:
        """Grade each context 0 (irrelevant), 1 (partly) or 2 (fully relevant) to the question."""
        sims = await blended_similarities(
            self._emb, question, list(contexts), self.embedding_weight
        )
        return [self._to_grade(s) for s in sims]

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        question, contexts = str(sample.user_input), list(sample.retrieved_contexts or [])
        if not tokenize(question):
            return nan("user_input has no words to compare the contexts against")
        if not contexts:
            return MetricResult(0.0, "no retrieved contexts (as RAGAS: 0)", {"grades": []})
        sims = await blended_similarities(self._emb, question, contexts, self.embedding_weight)
        grades = [self._to_grade(s) for s in sims]
        return MetricResult(
            sum(grades) / (2 * len(grades)),
            f"grades {grades} (0 irrelevant, 1 partly, 2 fully relevant)",
            {"grades": grades, "similarities": sims},
        )


class OfflineContextRecall(_OfflineMetric):
    """LLMContextRecall without an LLM: share of reference sentences the contexts support.

    A sentence is attributed when its best blended similarity to a context (cosine against
    the context and each of its sentences, overlap of the claim's content words) passes
    ``threshold``.
    """

    name = "offline_context_recall"
    required_columns: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts", "reference")
    threshold: float = 0.6

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        _unit(self.threshold, "threshold", -1.0)

    async def _best_scores(self, claims: list[str], contexts: list[str]) -> list[float]:
        contexts = [c for c in contexts if c.strip()]
        if not claims or not contexts:
            return [0.0] * len(claims)
        pieces = [(j, p) for j, c in enumerate(contexts) for p in [c, *split_sentences(c)]]
        vecs = await unit_vectors(self._emb, [*claims, *(p for _, p in pieces)])
        cos = vecs[: len(claims)] @ vecs[len(claims) :].T
        owner = np.array([j for j, _ in pieces])
        w = self.embedding_weight
        return [
            max(
                blend(float(cos[i, owner == j].max()), lexical_overlap(cl, c), w)
                for j, c in enumerate(contexts)
            )
            for i, cl in enumerate(claims)
        ]

    async def aattribute(self, claims: list[str], contexts: list[str]) -> list[bool]:
        """For each claim, whether the contexts support it (service mode of the judge)."""
        return [s >= self.threshold for s in await self._best_scores(list(claims), list(contexts))]

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        sentences = [s for s in split_sentences(str(sample.reference)) if tokenize(s)]
        if not sentences:
            return nan("reference has no sentences with words to attribute")
        scores = await self._best_scores(sentences, list(sample.retrieved_contexts or []))
        flags = [s >= self.threshold for s in scores]
        rows = zip(sentences, flags, scores, strict=True)
        details = {"sentences": [{"sentence": s, "attributed": f, "score": x} for s, f, x in rows]}
        reason = f"{sum(flags)} of {len(flags)} reference sentences attributed to the contexts"
        return MetricResult(sum(flags) / len(flags), reason, details)
