"""Traditional and non-LLM context metrics: equal to the libraries, RAGAS thresholds and cases."""

from __future__ import annotations

import math

import pytest
import sacrebleu
from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, Levenshtein
from rouge_score import rouge_scorer

from ragloop.errors import ConfigError, MissingColumnsError
from ragloop.eval.metrics import get_metric
from ragloop.eval.metrics._aggregate import average_precision
from ragloop.eval.metrics.nonllm_context import (
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
)
from ragloop.eval.metrics.traditional import (
    BleuScore,
    DistanceMeasure,
    ExactMatch,
    NonLLMStringSimilarity,
    RougeScore,
    StringPresence,
    string_similarity,
)

PAIRS = [
    ("The Eiffel Tower is located in India.", "The Eiffel Tower is located in Paris."),
    ("Paris is the capital of France.", "The capital of France is Paris."),
    ("The first superbowl was held on Jan 15, 1967", "The first Super Bowl was played in 1967."),
    ("cats", "A completely different sentence about dogs and their owners."),
    ("Water boils at 100 degrees. It freezes at 0.", "Water boils at 100 degrees Celsius."),
]


def _sample(response: str, reference: str) -> dict[str, str]:
    return {"response": response, "reference": reference}


@pytest.mark.parametrize(("response", "reference"), PAIRS)
def test_sentence_bleu_equals_sacrebleu_sentence_bleu(response: str, reference: str) -> None:
    expected = sacrebleu.sentence_bleu(response, [reference]).score / 100
    got = get_metric("sentence_bleu_score").score(_sample(response, reference)).value
    assert got == pytest.approx(expected)


def test_bleu_score_is_ragas_corpus_bleu_over_sentences() -> None:
    # RAGAS splits both texts on ". " and pairs them line by line: the second response
    # sentence is never compared, so a wrong second sentence costs nothing
    good, bad = "Water boils at 100 degrees. It freezes at 0.", "Water boils at 100 degrees. No."
    ref = "Water boils at 100 degrees. It freezes at 0."
    assert BleuScore().score(_sample(good, ref)).value == pytest.approx(1.0)
    assert BleuScore().score(_sample(bad, ref)).value == pytest.approx(1.0)
    assert get_metric("sentence_bleu_score").score(_sample(bad, ref)).value < 0.9


def test_bleu_matches_ragas_documented_example() -> None:
    result = BleuScore().score(_sample(*PAIRS[0]))
    assert result.value == pytest.approx(0.7071067811865478)


def test_bleu_passes_kwargs_to_sacrebleu_and_clamps_to_one() -> None:
    response, reference = "東京は日本の首都です", "東京は日本の首都です。"
    expected = sacrebleu.sentence_bleu(response, [reference], tokenize="char").score / 100
    metric = BleuScore(kwargs={"tokenize": "char"})
    assert metric.score(_sample(response, reference)).value == pytest.approx(expected)
    same = BleuScore().score(_sample("a b c d e", "a b c d e")).value
    assert same == pytest.approx(1.0) and same <= 1.0


def test_bleu_corpus_score_equals_sacrebleu_corpus_bleu() -> None:
    expected = sacrebleu.corpus_bleu([r for r, _ in PAIRS], [[g for _, g in PAIRS]]).score / 100
    result = BleuScore().corpus_score([_sample(r, g) for r, g in PAIRS])
    assert result.value == pytest.approx(expected)
    assert math.isnan(BleuScore().corpus_score([]).value)


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL"])
@pytest.mark.parametrize("mode", ["fmeasure", "precision", "recall"])
def test_rouge_equals_rouge_score_library(rouge_type: str, mode: str) -> None:
    scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=True)
    metric = RougeScore(rouge_type=rouge_type, mode=mode)
    for response, reference in PAIRS:
        expected = getattr(scorer.score(reference, response)[rouge_type], mode)
        assert metric.score(_sample(response, reference)).value == pytest.approx(expected)


def test_rouge_matches_ragas_documented_example() -> None:
    assert RougeScore().score(_sample(*PAIRS[0])).value == pytest.approx(0.8571428571428571)


def test_rouge_rejects_unknown_type_and_mode() -> None:
    with pytest.raises(ConfigError, match="rouge_type"):
        RougeScore(rouge_type="rouge7")
    with pytest.raises(ConfigError, match="mode"):
        RougeScore(mode="f1")
    with pytest.raises(ConfigError, match="tokenizer"):
        RougeScore(tokenizer="whitespace")


def test_rouge_non_ascii_is_zero_as_in_ragas_unless_unicode() -> None:
    sample = _sample("서울은 한국의 수도이다", "서울은 한국의 수도이다")
    result = RougeScore().score(sample)
    assert result.value == 0.0 and "rouge_score_unicode" in (result.reason or "")
    assert get_metric("rouge_score_unicode").score(sample).value == pytest.approx(1.0)
    assert RougeScore(tokenizer="unicode").score(sample).value == pytest.approx(1.0)
    half = RougeScore(tokenizer="unicode", rouge_type="rouge1", mode="recall")
    assert half.score(_sample("서울은", "서울은 수도")).value == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("Paris", "Paris", 1.0),
        ("India", "Paris", 0.0),
        ("paris", "Paris", 0.0),
        ("Paris ", "Paris", 0.0),
        ("The capital is Paris", "Paris", 0.0),
    ],
)
def test_exact_match(response: str, reference: str, expected: float) -> None:
    assert ExactMatch().score(_sample(response, reference)).value == expected


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("The Eiffel Tower is located in India.", "Eiffel Tower", 1.0),
        ("The Eiffel Tower is located in India.", "eiffel tower", 0.0),
        ("Paris", "Paris", 1.0),
        ("Paris", "The capital is Paris", 0.0),
        ("KX-217 ships with a warranty", "KX-217", 1.0),
    ],
)
def test_string_presence(response: str, reference: str, expected: float) -> None:
    assert StringPresence().score(_sample(response, reference)).value == expected


def test_string_similarity_matches_ragas_example_and_rapidfuzz() -> None:
    response, reference = PAIRS[0]
    assert NonLLMStringSimilarity().score(_sample(response, reference)).value == pytest.approx(
        0.8918918918918919
    )
    libs = {
        DistanceMeasure.LEVENSHTEIN: Levenshtein,
        DistanceMeasure.HAMMING: Hamming,
        DistanceMeasure.JARO: Jaro,
        DistanceMeasure.JARO_WINKLER: JaroWinkler,
    }
    for measure, lib in libs.items():
        for response, reference in PAIRS:
            expected = 1 - lib.normalized_distance(reference, response)
            by_enum = NonLLMStringSimilarity(distance_measure=measure)
            by_name = NonLLMStringSimilarity(distance_measure=measure.value)
            assert by_enum.score(_sample(response, reference)).value == pytest.approx(expected)
            assert by_name.score(_sample(response, reference)).value == pytest.approx(expected)


def test_string_similarity_rejects_unknown_measure() -> None:
    with pytest.raises(ConfigError, match="levenshtein"):
        NonLLMStringSimilarity(distance_measure="cosine")


def _ctx(retrieved: list[str], reference: list[str]) -> dict[str, list[str]]:
    return {"retrieved_contexts": retrieved, "reference_contexts": reference}


def test_similarity_exactly_half_is_constructible() -> None:
    assert string_similarity("ab", "ax") == 0.5
    assert string_similarity("abcd", "abxy") == 0.5


def test_non_llm_recall_is_strict_at_threshold() -> None:
    recall = NonLLMContextRecall()
    assert recall.score(_ctx(["ax"], ["ab"])).value == 0.0  # 0.5 is not > 0.5
    assert recall.score(_ctx(["abx"], ["abc"])).value == 1.0  # 2/3 > 0.5
    mixed = recall.score(_ctx(["abxy", "zzzz", "cdef"], ["abcd", "cdef", "qrst"]))
    assert mixed.value == pytest.approx(1 / 3)
    assert mixed.details["recalled"] == [False, True, False]


def test_non_llm_precision_is_inclusive_at_threshold() -> None:
    precision = NonLLMContextPrecisionWithReference()
    assert precision.score(_ctx(["ax"], ["ab"])).value == 1.0  # 0.5 >= 0.5
    assert precision.score(_ctx(["xy"], ["ab"])).value == 0.0
    ranked = precision.score(_ctx(["zz", "ax", "ab"], ["ab"]))
    assert ranked.details["verdicts"] == [0, 1, 1]
    assert ranked.value == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_non_llm_threshold_is_a_parameter() -> None:
    assert NonLLMContextRecall(threshold=0.4).score(_ctx(["ax"], ["ab"])).value == 1.0
    assert NonLLMContextPrecisionWithReference(threshold=0.6).score(_ctx(["ax"], ["ab"])).value == 0
    with pytest.raises(ConfigError):
        NonLLMContextRecall(threshold=1.5)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([1, 1, 0], 1.0),
        ([0, 1], 0.5),
        ([1, 0, 1], (1 + 2 / 3) / 2),
        ([0, 0, 1], 1 / 3),
        ([0, 1, 0, 1], (1 / 2 + 2 / 4) / 2),
        ([0, 0], 0.0),
    ],
)
def test_average_precision_known_lists(verdicts: list[int], expected: float) -> None:
    assert average_precision(verdicts) == pytest.approx(expected)
    # the same ranking through the metric: "ab" is useful, "zz" is not
    retrieved = ["ab" if v else "zz" for v in verdicts]
    result = NonLLMContextPrecisionWithReference().score(_ctx(retrieved, ["ab"]))
    assert result.value == pytest.approx(expected)


@pytest.mark.parametrize(
    ("name", "sample", "missing"),
    [
        ("bleu_score", {"response": "x"}, ["reference"]),
        ("rouge_score", {"reference": "x"}, ["response"]),
        ("exact_match", {}, ["response", "reference"]),
        ("string_present", {"response": "x"}, ["reference"]),
        ("non_llm_string_similarity", {"reference": "x"}, ["response"]),
        ("non_llm_context_recall", {"retrieved_contexts": ["a"]}, ["reference_contexts"]),
        (
            "non_llm_context_precision_with_reference",
            {"reference_contexts": ["a"]},
            ["retrieved_contexts"],
        ),
    ],
)
def test_missing_columns_raise(name: str, sample: dict, missing: list[str]) -> None:
    metric = get_metric(name)
    with pytest.raises(MissingColumnsError) as info:
        metric.score(sample)
    assert info.value.metric == name and info.value.missing == missing
    assert all(col in str(info.value) for col in missing)


@pytest.mark.parametrize(
    ("name", "sample", "expected"),
    [
        ("exact_match", {"response": "", "reference": ""}, 1.0),
        ("bleu_score", {"response": "", "reference": "x"}, 0.0),
        ("rouge_score", {"response": "", "reference": "x"}, 0.0),
        ("string_present", {"response": "x", "reference": ""}, 1.0),
        (
            "non_llm_context_precision_with_reference",
            {"retrieved_contexts": [], "reference_contexts": ["a"]},
            0.0,
        ),
        (
            "non_llm_context_recall",
            {"retrieved_contexts": [], "reference_contexts": ["a"]},
            None,
        ),
    ],
)
def test_empty_values_are_scored_like_ragas_not_missing(name, sample, expected) -> None:
    result = get_metric(name).score(sample)
    if expected is None:
        assert math.isnan(result.value) and result.reason
    else:
        assert result.value == pytest.approx(expected)


def test_old_column_names_are_accepted() -> None:
    assert ExactMatch().score({"answer": "Paris", "ground_truth": "Paris"}).value == 1.0
