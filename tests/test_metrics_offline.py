"""Offline metrics and SemanticSimilarity: hand-computed cases, seed orderings with WordLlama."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from ragloop.errors import ConfigError, MissingColumnsError, RagloopError
from ragloop.eval.metrics import get_metric
from ragloop.eval.metrics._aggregate import VERDICT_SCORES
from ragloop.eval.metrics.offline import (
    OfflineAnswerRelevancy,
    OfflineContextRecall,
    OfflineContextRelevance,
    is_noncommittal,
)
from ragloop.eval.metrics.semantic import SemanticSimilarity, lexical_overlap
from tests.fakes.embeddings import HashEmbeddings


def _at(cos: float) -> list[float]:
    """A unit vector whose cosine with [1, 0] is ``cos``."""
    return [cos, math.sqrt(max(0.0, 1 - cos * cos))]


class _WordLlamaEmbeddings(Embeddings):
    """WordLlama from the weights inside its wheel (downloads disabled)."""

    def __init__(self) -> None:
        import wordllama
        from wordllama import WordLlama

        root = Path(wordllama.__file__).parent
        self.model = WordLlama.load(cache_dir=root, disable_download=True)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture(scope="module")
def wordllama() -> Embeddings:
    return _WordLlamaEmbeddings()


# --- noncommittal --------------------------------------------------------------------------

NONCOMMITTAL = [
    "I don't know.",
    "I do not know the answer to that.",
    "The provided context does not say.",
    "I cannot find this in the documents.",
    "Sorry, I don't know. Please check the official website.",
    "I\u2019m not sure.",
    "There is not enough information in the context to answer.",
    "The answer is not mentioned in the provided context.",
    "I don't know yet; I need to look this up.",
    "I don't know about the smartphone invented in 2023 as I am unaware of anything after 2022.",
]
COMMITTAL = [
    "The capital of France is Paris.",
    "I'm not sure, but I think it is Paris.",
    "The feature is not available on Windows.",
    "Python cannot find the module if PATH is wrong.",
    "There is no information loss in lossless compression.",
    "I don't know much about wine. The capital of France is Paris.",
    "",
]


@pytest.mark.parametrize("text", NONCOMMITTAL)
def test_noncommittal_detected(text: str) -> None:
    assert is_noncommittal(text)


@pytest.mark.parametrize("text", COMMITTAL)
def test_committal_not_flagged(text: str) -> None:
    assert not is_noncommittal(text)


@pytest.mark.parametrize("text", NONCOMMITTAL[:4])
def test_noncommittal_response_scores_zero(text: str) -> None:
    metric = OfflineAnswerRelevancy(embeddings=HashEmbeddings())
    result = metric.score({"user_input": "When was the first Super Bowl?", "response": text})
    assert result.value == 0.0 and result.reason == "noncommittal"


# --- offline answer relevancy ----------------------------------------------------------------

Q = "Which is it?"


def _pinned_relevancy(cosines: dict[str, float], **params: float) -> OfflineAnswerRelevancy:
    table = {Q: [1.0, 0.0], **{s: _at(c) for s, c in cosines.items()}}
    return OfflineAnswerRelevancy(
        embeddings=HashEmbeddings(table=table), embedding_weight=1.0, **params
    )


def test_statement_verdicts_follow_thresholds() -> None:
    cosines = {
        "Alpha one.": 0.9,
        "Beta two.": 0.64,
        "Gamma three.": 0.58,
        "Delta four.": 0.3,
        "Omega.": 0.0,
    }
    metric = _pinned_relevancy(cosines)
    result = metric.score({"user_input": Q, "response": " ".join(cosines)})
    assert result.details["statements"] == list(cosines)
    assert result.details["verdicts"] == ["fully", "mostly", "partial", "minor", "none"]
    assert result.details["similarities"] == pytest.approx(list(cosines.values()))
    assert result.value == pytest.approx((1.0 + 0.9 + 0.7 + 0.3 + 0.0) / 5)  # T=0.5: the mean
    assert "3 of 5 statements" in (result.reason or "")


def test_continuing_statement_stays_one_level_below_previous() -> None:
    cosines = {"Alpha one.": 0.9, "It follows.": 0.0, "Then more.": 0.0, "Omega.": 0.0}
    result = _pinned_relevancy(cosines).score({"user_input": Q, "response": " ".join(cosines)})
    assert result.details["verdicts"] == ["fully", "mostly", "partial", "none"]


def test_temperature_orders_scores_and_is_validated() -> None:
    cosines = {"Alpha one.": 0.9, "Beta two.": 0.9, "Omega.": 0.0}
    sample = {"user_input": Q, "response": " ".join(cosines)}
    strict, mean, lenient = (
        _pinned_relevancy(cosines, temperature=t).score(sample).value for t in (0.1, 0.5, 1.0)
    )
    assert strict < mean < lenient
    assert mean == pytest.approx(2 / 3)
    assert strict < 0.1  # one irrelevant statement pulls a strict score down hard
    for bad in (-0.1, 1.5):
        with pytest.raises(ConfigError, match="temperature"):
            OfflineAnswerRelevancy(embeddings=HashEmbeddings(), temperature=bad)
    with pytest.raises(ConfigError, match="descending"):
        OfflineAnswerRelevancy(embeddings=HashEmbeddings(), verdict_thresholds=(0.2, 0.5, 0.6, 0.7))


def test_relevancy_nan_when_question_has_no_words() -> None:
    metric = OfflineAnswerRelevancy(embeddings=HashEmbeddings())
    result = metric.score({"user_input": "?!", "response": "Paris is the capital."})
    assert math.isnan(result.value) and "user_input" in (result.reason or "")


SEEDS = {
    "password": (
        "How do I reset my password?",
        "To reset your password, go to Settings > Security > Change Password. Enter your "
        "current password and then your new password twice. Click Save to confirm.",
    ),
    "france_high": (
        "What is the capital of France?",
        "The capital of France is Paris. It is located in northern France along the Seine River.",
    ),
    "python_mixed": (
        "How do I install Python on Windows?",
        "Python is a versatile programming language created by Guido van Rossum. To install "
        "it on Windows, download the installer from python.org and run it. Python supports "
        "multiple paradigms including object-oriented and functional programming.",
    ),
    "france_low": (
        "What is the capital of France?",
        "France is a beautiful country with great food. The Eiffel Tower is a popular "
        "tourist attraction. French wine is world-renowned.",
    ),
}


def test_seed_ordering_with_wordllama(wordllama: Embeddings) -> None:
    metric = OfflineAnswerRelevancy(embeddings=wordllama)
    s = {k: metric.score({"user_input": q, "response": r}) for k, (q, r) in SEEDS.items()}
    v = {k: r.value for k, r in s.items()}
    assert min(v["password"], v["france_high"]) > v["python_mixed"] > v["france_low"]
    assert v["france_high"] > 0.5 > v["france_low"]  # the seed's high/low bands
    assert s["python_mixed"].details["verdicts"].count("fully") == 1  # only the install step


def test_super_bowl_answer_beats_off_topic_with_wordllama(wordllama: Embeddings) -> None:
    metric = OfflineAnswerRelevancy(embeddings=wordllama)
    q = "When was the first super bowl?"
    good = metric.score(
        {"user_input": q, "response": "The first superbowl was held on Jan 15, 1967"}
    )
    bad = metric.score(
        {"user_input": q, "response": "Bananas are yellow. Rust has a borrow checker."}
    )
    assert good.value > 0.9 > 0.1 > bad.value


def test_compound_words_match_both_ways() -> None:
    assert lexical_overlap("super bowl", "The superbowl") == 1.0
    assert lexical_overlap("superbowl", "the super bowl") == 1.0
    assert lexical_overlap("the of", "anything") is None


# --- offline context relevance -------------------------------------------------------------


def test_context_relevance_grades_0_1_2() -> None:
    contexts = ["ctx full", "ctx partial", "ctx none"]
    table = {Q: [1.0, 0.0], **{c: _at(x) for c, x in zip(contexts, (0.9, 0.3, 0.0), strict=True)}}
    metric = OfflineContextRelevance(embeddings=HashEmbeddings(table=table), embedding_weight=1.0)
    result = metric.score({"user_input": Q, "retrieved_contexts": contexts})
    assert result.details["grades"] == [2, 1, 0]
    assert result.value == pytest.approx((2 + 1 + 0) / 6)
    assert asyncio.run(metric.agrade(Q, contexts)) == [2, 1, 0]
    assert asyncio.run(metric.agrade(Q, [])) == []
    tight = OfflineContextRelevance(
        embeddings=HashEmbeddings(table=table), embedding_weight=1.0, partial_threshold=0.5
    )
    assert asyncio.run(tight.agrade(Q, contexts)) == [2, 0, 0]
    with pytest.raises(ConfigError):
        OfflineContextRelevance(
            embeddings=HashEmbeddings(), partial_threshold=0.9, full_threshold=0.5
        )


CALIBRATION = [  # (question, relevant, partially relevant, unrelated)
    (
        "What is the capital of France?",
        "Paris is the capital and largest city of France.",
        "France is a country in Western Europe bordered by Belgium, Germany and Spain.",
        "The mitochondria produces most of the chemical energy in a cell.",
    ),
    (
        "When was the first Super Bowl played?",
        "The first Super Bowl was played on January 15, 1967, in Los Angeles.",
        "The Super Bowl is the annual championship game of the National Football League.",
        "Photosynthesis converts light energy into chemical energy.",
    ),
    (
        "How does the KX-217 pump reduce noise?",
        "The KX-217 pump reduces noise with a rubber-mounted motor and a slower impeller.",
        "The KX-217 pump is rated for 40 litres per minute.",
        "Bread dough rises because yeast releases carbon dioxide.",
    ),
]


@pytest.mark.parametrize(("question", "relevant", "partial", "unrelated"), CALIBRATION)
def test_context_relevance_separates_with_wordllama(
    wordllama: Embeddings, question: str, relevant: str, partial: str, unrelated: str
) -> None:
    metric = OfflineContextRelevance(embeddings=wordllama)
    assert asyncio.run(metric.agrade(question, [relevant, partial, unrelated])) == [2, 1, 0]


# --- offline context recall ----------------------------------------------------------------


def test_context_recall_counts_attributed_sentences() -> None:
    metric = OfflineContextRecall(embeddings=HashEmbeddings())
    contexts = ["Paris is the capital of France. It lies on the Seine.", "Lyon is known for food."]
    reference = "Paris is the capital of France. Lyon is known for food. Zebras graze quietly."
    result = metric.score(
        {"user_input": "q", "retrieved_contexts": contexts, "reference": reference}
    )
    rows = result.details["sentences"]
    assert [r["attributed"] for r in rows] == [True, True, False]
    assert result.value == pytest.approx(2 / 3)
    assert "2 of 3" in (result.reason or "")
    claims = ["Lyon is known for food.", "Zebras graze quietly."]
    assert asyncio.run(metric.aattribute(claims, contexts)) == [True, False]
    assert asyncio.run(metric.aattribute(claims, [])) == [False, False]
    assert asyncio.run(metric.aattribute([], contexts)) == []


RECALL_CONTEXTS = [
    "The first Super Bowl was played on January 15, 1967, at the Los Angeles Memorial "
    "Coliseum. The Green Bay Packers beat the Kansas City Chiefs 35 to 10."
]
RECALL_CLAIMS = [  # two supported by the context, two not
    "The first Super Bowl took place in January 1967.",
    "Green Bay won the game against Kansas City.",
    "Bart Starr was named the game's most valuable player.",
    "Mount Everest is the highest mountain on Earth.",
]


def test_context_recall_with_wordllama(wordllama: Embeddings) -> None:
    contexts, claims = RECALL_CONTEXTS, RECALL_CLAIMS
    metric = OfflineContextRecall(embeddings=wordllama)
    assert asyncio.run(metric.aattribute(claims, contexts)) == [True, True, False, False]


# --- SemanticSimilarity ----------------------------------------------------------------------


def test_semantic_similarity_is_the_cosine_and_threshold_makes_it_binary() -> None:
    table = {"resp": [1.0, 2.0, 2.0], "ref": [2.0, 0.0, 1.0], "anti": [-2.0, 0.0, -1.0]}
    emb = HashEmbeddings(table=table)
    expected = (1 * 2 + 2 * 0 + 2 * 1) / (3 * math.sqrt(5))
    result = SemanticSimilarity(embeddings=emb).score({"response": "resp", "reference": "ref"})
    assert result.value == pytest.approx(expected)
    assert SemanticSimilarity(embeddings=emb).score(
        {"response": "anti", "reference": "ref"}
    ).value == pytest.approx(-1.0)
    assert (
        SemanticSimilarity(embeddings=emb, threshold=0.5)
        .score({"response": "resp", "reference": "ref"})
        .value
        == 1.0
    )
    assert (
        SemanticSimilarity(embeddings=emb, threshold=0.7)
        .score({"response": "resp", "reference": "ref"})
        .value
        == 0.0
    )


def test_semantic_similarity_zero_vector_is_nan_and_embeddings_required() -> None:
    result = SemanticSimilarity(embeddings=HashEmbeddings()).score(
        {"response": "...", "reference": "x"}
    )
    assert math.isnan(result.value) and "zero vector" in (result.reason or "")
    with pytest.raises(RagloopError, match="embeddings"):
        SemanticSimilarity()
    with pytest.raises(RagloopError, match="embeddings"):
        OfflineContextRecall()


@pytest.mark.parametrize(
    ("name", "sample", "missing"),
    [
        ("offline_answer_relevancy", {"user_input": "q"}, ["response"]),
        (
            "offline_context_relevance",
            {"user_input": "q"},
            ["retrieved_contexts"],
        ),
        ("offline_context_recall", {"retrieved_contexts": ["c"]}, ["user_input", "reference"]),
        ("semantic_similarity", {"response": "r"}, ["reference"]),
    ],
)
def test_missing_columns_raise(name: str, sample: dict, missing: list[str]) -> None:
    metric = get_metric(name, embeddings=HashEmbeddings())
    with pytest.raises(MissingColumnsError) as info:
        metric.score(sample)
    assert info.value.missing == missing and name in str(info.value)


def test_verdict_levels_come_from_shared_scores() -> None:
    from ragloop.eval.metrics.offline import LEVELS

    assert list(LEVELS) == sorted(VERDICT_SCORES, key=VERDICT_SCORES.__getitem__, reverse=True)
    assert np.isclose([VERDICT_SCORES[v] for v in LEVELS], [1.0, 0.9, 0.7, 0.3, 0.0]).all()


# --- the same calibration cases on the default embedded model ---------------------------------


@pytest.fixture(scope="module")
def minilm() -> Embeddings:
    from ragloop.embeddings import load_local

    return load_local("minilm")


def test_offline_thresholds_hold_on_the_default_model(minilm: Embeddings) -> None:
    """The WordLlama-calibrated thresholds separate the hand-made cases on MiniLM as well."""
    relevancy = OfflineAnswerRelevancy(embeddings=minilm)
    v = {k: relevancy.score({"user_input": q, "response": r}).value for k, (q, r) in SEEDS.items()}
    assert min(v["password"], v["france_high"]) > v["python_mixed"] > v["france_low"]
    assert v["france_high"] > 0.5 > v["france_low"]
    relevance = OfflineContextRelevance(embeddings=minilm)
    for question, relevant, partial, unrelated in CALIBRATION:
        grades = asyncio.run(relevance.agrade(question, [relevant, partial, unrelated]))
        assert grades == [2, 1, 0], question
    recall = OfflineContextRecall(embeddings=minilm)
    got = asyncio.run(recall.aattribute(RECALL_CLAIMS, RECALL_CONTEXTS))
    assert got == [True, True, False, False]
