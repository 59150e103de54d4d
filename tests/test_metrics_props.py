"""Property: every non-LLM and offline metric, on any unicode input, stays in range or is NaN.

Empty required columns are the one exception: they raise MissingColumnsError naming them.
"""

from __future__ import annotations

import asyncio
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloop.errors import MissingColumnsError
from ragloop.eval.metrics.base import Metric
from ragloop.eval.metrics.nonllm_context import (
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
)
from ragloop.eval.metrics.offline import (
    OfflineAnswerRelevancy,
    OfflineContextRecall,
    OfflineContextRelevance,
    is_noncommittal,
)
from ragloop.eval.metrics.semantic import SemanticSimilarity
from ragloop.eval.metrics.traditional import (
    BleuScore,
    ExactMatch,
    NonLLMStringSimilarity,
    RougeScore,
    StringPresence,
)
from tests.fakes.embeddings import HashEmbeddings

#: a NaN reason that is an exception's text means the metric crashed instead of deciding
CRASH = re.compile(r"^[A-Z]\w*(Error|Exception)\b")


def _metrics() -> list[Metric]:
    emb = HashEmbeddings()
    return [
        BleuScore(),
        RougeScore(),
        RougeScore(rouge_type="rouge2", mode="recall", tokenizer="unicode"),
        ExactMatch(),
        StringPresence(),
        NonLLMStringSimilarity(),
        NonLLMStringSimilarity(distance_measure="hamming"),
        NonLLMStringSimilarity(distance_measure="jaro_winkler"),
        NonLLMContextRecall(),
        NonLLMContextPrecisionWithReference(),
        SemanticSimilarity(embeddings=emb),
        SemanticSimilarity(embeddings=emb, threshold=0.3),
        OfflineAnswerRelevancy(embeddings=emb),
        OfflineAnswerRelevancy(embeddings=emb, temperature=0.1),
        OfflineContextRelevance(embeddings=emb),
        OfflineContextRecall(embeddings=emb),
    ]


METRICS = _metrics()

words = st.text(alphabet=st.sampled_from(list("abc Paris France 1967.!?")), max_size=40)
#: any unicode, small word soups (so overlaps happen), blanks and a fixed mixed-script text
texts = st.one_of(
    st.text(max_size=40),
    words,
    st.sampled_from(["", " ", "\n\n", "...", "ß✓日本. 1967!", "Я не знаю.", "I don't know."]),
)
text_lists = st.one_of(
    st.lists(texts, max_size=4),
    st.sampled_from([[], [""], ["  ", "\n"]]),
)


def _empty(value: object) -> bool:
    """Only an absent (None) column is missing; "" and [] are values RAGAS scores."""
    return value is None


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: f"{m.name}-{id(m) % 1000}")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    user_input=texts,
    response=texts,
    reference=texts,
    retrieved=text_lists,
    reference_contexts=text_lists,
)
def test_in_range_or_nan_with_reason(
    metric: Metric,
    user_input: str,
    response: str,
    reference: str,
    retrieved: list[str],
    reference_contexts: list[str],
) -> None:
    sample = {
        "user_input": user_input,
        "response": response,
        "reference": reference,
        "retrieved_contexts": retrieved,
        "reference_contexts": reference_contexts,
    }
    missing = [c for c in metric.required_columns if _empty(sample[c])]
    if missing:
        with pytest.raises(MissingColumnsError) as info:
            metric.score(sample)
        assert info.value.missing == missing
        return
    result = metric.score(sample)
    if math.isnan(result.value):
        assert result.reason and not CRASH.match(result.reason), result.reason
        return
    low, high = metric.value_range
    assert low <= result.value <= high
    binary = metric.output_type == "binary" or getattr(metric, "threshold", None) is not None
    if binary and isinstance(metric, SemanticSimilarity | ExactMatch | StringPresence):
        assert result.value in (0.0, 1.0)


@settings(max_examples=80, deadline=None)
@given(question=texts, contexts=text_lists, claims=text_lists)
def test_graph_helpers_return_one_verdict_per_item(
    question: str, contexts: list[str], claims: list[str]
) -> None:
    emb = HashEmbeddings()
    grades = asyncio.run(OfflineContextRelevance(embeddings=emb).agrade(question, contexts))
    assert len(grades) == len(contexts) and set(grades) <= {0, 1, 2}
    flags = asyncio.run(OfflineContextRecall(embeddings=emb).aattribute(claims, contexts))
    assert len(flags) == len(claims) and all(isinstance(f, bool) for f in flags)
    assert isinstance(is_noncommittal(question), bool)


@settings(max_examples=60, deadline=None)
@given(question=texts, response=texts)
def test_offline_relevancy_never_decreases_with_temperature(question: str, response: str) -> None:
    emb = HashEmbeddings()
    sample = {"user_input": question, "response": response}
    if _empty(question) or _empty(response):
        return
    values = [
        OfflineAnswerRelevancy(embeddings=emb, temperature=t).score(sample).value
        for t in (0.0, 0.1, 0.5, 0.9, 1.0)
    ]
    if any(math.isnan(v) for v in values):
        assert all(math.isnan(v) for v in values)
        return
    assert all(a <= b + 1e-12 for a, b in zip(values, values[1:], strict=False))
