"""Property: any LLM metric, strings and judge reply give a value in range or NaN with a reason."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloop.errors import MissingColumnsError
from ragloop.eval.schema import SingleTurnSample
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.embeddings import HashEmbeddings
from tests.metrics_llm_fakes import llm_metric_classes, well_formed

#: field names of every judge output model, so random JSON often comes close to valid
FIELDS = [
    "rating",
    "per_context",
    "questions",
    "question",
    "noncommittal",
    "intent",
    "statements",
    "verdicts",
    "verdict",
    "reason",
    "classifications",
    "attributed",
    "statement",
    "useful",
    "entities",
    "TP",
    "FP",
    "FN",
    "score",
    "feedback",
]
UNEXPECTED = re.compile(r"^[A-Z]\w*(Error|Exception|Interrupt)\b")
LEVELS = ["fully", "mostly", "partial", "minor", "none", "FULLY", "maybe"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 9),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.sampled_from(LEVELS),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=5)), inner, max_size=4),
    ),
    max_leaves=12,
)


@st.composite
def replies(draw: st.DrawFn) -> object:
    """One scripted judge reply: garbage text, random JSON (plain, fenced, in prose) or valid."""
    kind = draw(st.sampled_from(["text", "json", "fenced", "prose", "valid"]))
    if kind == "text":
        return draw(st.text(max_size=60))
    if kind == "valid":
        return well_formed
    value = json.dumps(draw(json_values), ensure_ascii=False)
    if kind == "fenced":
        return f"```json\n{value}\n```"
    if kind == "prose":
        return f"Here you go: {value} — done."
    return value


some_text = st.text(min_size=1, max_size=40)
#: mostly present (any unicode), sometimes blank, empty or absent
texts = st.one_of(
    some_text, some_text, some_text, st.sampled_from([None, "", " ", "ß✓日本. 1967!"])
)
contexts = st.one_of(
    st.lists(st.text(max_size=30), min_size=1, max_size=5),
    st.lists(st.text(max_size=30), min_size=1, max_size=5),
    st.sampled_from([None, [], [""], ["  ", "\n"]]),
)
samples = st.builds(
    SingleTurnSample,
    user_input=texts,
    response=texts,
    reference=texts,
    retrieved_contexts=contexts,
    rubrics=st.one_of(
        st.none(),
        st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=20), max_size=3),
    ),
)


@pytest.mark.parametrize("cls", llm_metric_classes(), ids=lambda c: c.name)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample=samples, script=st.lists(replies(), min_size=1, max_size=5))
def test_value_in_range_or_nan_with_reason(cls, sample, script):
    metric = cls(llm=ScriptedChatModel(script=script), embeddings=HashEmbeddings(dim=16))
    if metric.missing_columns(sample):
        with pytest.raises(MissingColumnsError):
            metric.score(sample)
        return
    result = metric.score(sample)
    assert isinstance(result.value, float)
    if math.isnan(result.value):
        assert isinstance(result.reason, str) and result.reason.strip()
        # NaN must come from a judged outcome, not from a bug caught by Metric.ascore
        assert not UNEXPECTED.match(result.reason), result.reason
    else:
        low, high = cls.value_range
        assert low <= result.value <= high, (result.value, result.reason)


def test_answer_correctness_range_holds_its_unclamped_cosine():
    # before: the range said [0, 1], yet the cosine is unclamped as in RAGAS, so texts whose
    # vectors point apart scored below 0 (hypothesis found '0' against '00000')
    from ragloop.eval.metrics.answer_quality import AnswerCorrectness

    sample = SingleTurnSample(user_input="0", response="0", reference="00000")
    metric = AnswerCorrectness(
        llm=ScriptedChatModel(script=["[]", well_formed]), embeddings=HashEmbeddings(dim=16)
    )
    result = metric.score(sample)
    assert result.value < 0  # these two vectors point apart: the cosine is not floored
    low, high = AnswerCorrectness.value_range
    assert low <= result.value <= high
