"""LLM-judged metrics: formulas by hand with a scripted judge and pinned embeddings."""

from __future__ import annotations

import asyncio
import math

import pytest

from ragloop.errors import ConfigError, MissingColumnsError, RagloopError
from ragloop.eval.judge import Judge, Prompt
from ragloop.eval.metrics.base import get_metric
from ragloop.eval.schema import SingleTurnSample
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.embeddings import HashEmbeddings
from tests.metrics_llm_fakes import (
    by_prompt,
    inputs_of,
    llm_metric_classes,
    prompt_name,
    well_formed,
)

FULL = SingleTurnSample(
    user_input="When was the first super bowl?",
    response="The first superbowl was held on Jan 15, 1967. It was in Los Angeles.",
    reference="The first Super Bowl was played on January 15, 1967, in Los Angeles.",
    retrieved_contexts=[
        "The First AFL-NFL World Championship Game was played on January 15, 1967.",
        "It was held at the Los Angeles Memorial Coliseum.",
        "Tickets cost twelve dollars.",
    ],
)


def metric(name: str, script: list, table: dict | None = None, **params):
    llm = ScriptedChatModel(script=script)
    return get_metric(
        name, llm=llm, embeddings=HashEmbeddings(dim=3 if table else 64, table=table), **params
    ), llm


def questions(*pairs: tuple[str, bool]) -> dict:
    return {"questions": [{"question": q, "noncommittal": nc} for q, nc in pairs]}


# --- ResponseRelevancy ----------------------------------------------------------------------

Q = "When was the first super bowl?"
PINNED = {
    Q: [1.0, 0.0, 0.0],
    "q1": [1.0, 0.0, 0.0],
    "q2": [0.8, 0.6, 0.0],
    "q3": [0.0, 1.0, 0.0],
    "opposite": [-1.0, 0.0, 0.0],
}


def test_answer_relevancy_is_the_mean_cosine_to_the_question():
    m, llm = metric(
        "answer_relevancy", [questions(("q1", False), ("q2", False), ("q3", False))], PINNED
    )
    res = m.score({"user_input": Q, "response": "The first superbowl was held on Jan 15, 1967"})
    assert res.value == pytest.approx((1.0 + 0.8 + 0.0) / 3)
    assert res.details["similarities"] == pytest.approx([1.0, 0.8, 0.0])
    assert res.details["questions"] == ["q1", "q2", "q3"]
    assert len(llm.calls) == 1 and inputs_of(llm.calls[0])["n"] == 3  # N questions, ONE call


def test_answer_relevancy_is_zero_only_when_every_question_is_noncommittal():
    sample = {"user_input": Q, "response": "I don't know."}
    all_nc, _ = metric(
        "answer_relevancy", [questions(("q1", True), ("q2", True), ("q3", True))], PINNED
    )
    res = all_nc.score(sample)
    assert res.value == 0.0 and "noncommittal" in res.reason
    # RAGAS multiplies by int(not all(noncommittal)): one committal question keeps the score
    some_nc, _ = metric(
        "answer_relevancy", [questions(("q1", True), ("q2", False), ("q3", True))], PINNED
    )
    assert some_nc.score(sample).value == pytest.approx(0.6)


def test_answer_relevancy_cosine_is_not_clamped():
    m, _ = metric("answer_relevancy", [questions(("opposite", False))], PINNED, strictness=1)
    assert m.score({"user_input": Q, "response": "x"}).value == pytest.approx(-1.0)
    assert m.value_range == (-1.0, 1.0)


def test_answer_relevancy_uses_strictness_questions_at_most():
    m, llm = metric(
        "answer_relevancy",
        [questions(("q1", False), ("q2", False), ("q3", False))],
        PINNED,
        strictness=2,
    )
    res = m.score({"user_input": Q, "response": "x"})
    assert inputs_of(llm.calls[0])["n"] == 2 and res.details["questions"] == ["q1", "q2"]
    assert res.value == pytest.approx(0.9)
    with pytest.raises(ConfigError):
        get_metric("answer_relevancy", llm=llm, embeddings=HashEmbeddings(), strictness=0)


def test_super_bowl_seed_example_scores_high():
    m, _ = metric(
        "answer_relevancy",
        [
            questions(
                ("When was the first super bowl held?", False),
                ("When was the first superbowl?", False),
                ("What was the date of the first super bowl?", False),
            )
        ],
    )
    res = m.score({"user_input": Q, "response": "The first superbowl was held on Jan 15, 1967"})
    assert 0.6 < res.value <= 1.0
    assert len(res.details["questions"]) == 3


def test_france_high_relevancy_answer_scores_above_the_low_one():
    question = "Where is France and what is it's capital?"
    generated = {
        "France is in western Europe.": questions(
            ("In which part of Europe is France located?", False),
            ("What is the geographical location of France within Europe?", False),
            ("Can you identify the region of Europe where France is situated?", False),
        ),
        "France is in western Europe and Paris is its capital.": questions(
            ("Where is France and what is its capital?", False),
            ("What is the capital of France and where is France?", False),
            ("Where is France located and what is the capital of France?", False),
        ),
    }
    reply = by_prompt({"answer_relevancy.questions": lambda data: generated[data["response"]]})
    m, _ = metric("answer_relevancy", [reply])
    low = m.score({"user_input": question, "response": "France is in western Europe."})
    high = m.score(
        {
            "user_input": question,
            "response": "France is in western Europe and Paris is its capital.",
        }
    )
    assert high.value > low.value


# --- Intent answer relevancy (eval_lib) -----------------------------------------------------


def intent_script(statements: list[str], verdicts: list[str]) -> list:
    return [
        {"intent": "the user's goal", "statements": statements},
        {"verdicts": [{"verdict": v, "reason": f"{v} match"} for v in verdicts], "reason": ""},
    ]


def intent_score(user_input: str, response: str, verdicts: list[str], **params):
    statements = [f"statement {i}" for i in range(len(verdicts))]
    m, llm = metric("intent_answer_relevancy", intent_script(statements, verdicts), **params)
    return m.score({"user_input": user_input, "response": response}), llm


def test_intent_seed_cases_order_all_relevant_over_mixed_over_off_topic():
    password, _ = intent_score(
        "How do I reset my password?",
        "To reset your password, go to Settings > Security > Change Password. Enter your "
        "current password and then your new password twice. Click Save to confirm.",
        ["fully", "fully", "fully"],
    )
    capital_high, _ = intent_score(
        "What is the capital of France?",
        "The capital of France is Paris. It is located in northern France along the Seine River.",
        ["fully", "mostly"],
    )
    capital_low, _ = intent_score(
        "What is the capital of France?",
        "France is a beautiful country with great food. The Eiffel Tower is a popular tourist "
        "attraction. French wine is world-renowned.",
        ["minor", "none", "none"],
    )
    python, _ = intent_score(
        "How do I install Python on Windows?",
        "Python is a versatile programming language created by Guido van Rossum. To install it "
        "on Windows, download the installer from python.org and run it. Python supports multiple "
        "paradigms including object-oriented and functional programming.",
        ["minor", "fully", "minor"],
    )
    assert password.value == pytest.approx(1.0)
    assert capital_high.value == pytest.approx(0.95) and capital_high.value >= 0.95
    assert capital_low.value == pytest.approx(0.1) and capital_low.value < 0.5
    assert python.value == pytest.approx((0.3 + 1.0 + 0.3) / 3) and 0.5 <= python.value <= 0.7
    assert password.value > python.value > capital_low.value


def test_intent_makes_two_calls_and_returns_verdicts_and_reason():
    res, llm = intent_score("q?", "a. b.", ["fully", "partial"])
    assert len(llm.calls) == 2 and res.details["llm_calls"] == 2
    assert res.details["intent"] == "the user's goal"
    assert [v["verdict"] for v in res.details["verdicts"]] == ["fully", "partial"]
    assert [v["score"] for v in res.details["verdicts"]] == [1.0, 0.7]
    assert res.reason and res.details["reason"] == res.reason
    assert prompt_name(llm.calls[0]) == "intent_answer_relevancy.statements"
    assert inputs_of(llm.calls[1])["statements"] == ["statement 0", "statement 1"]


def test_softmax_temperature_half_is_the_mean_and_never_decreases():
    verdicts = ["fully", "fully", "none"]
    by_t = {
        t: intent_score("q", "r", verdicts, temperature=t)[0].value
        for t in (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)
    }
    assert by_t[0.5] == 2 / 3  # exactly the arithmetic mean
    values = list(by_t.values())
    assert all(a <= b for a, b in zip(values, values[1:], strict=False))
    # T=0.1: beta=-8, score = 2e^-8 / (2e^-8 + 1), near the minimum 0
    assert by_t[0.1] == pytest.approx(2 * math.exp(-8) / (2 * math.exp(-8) + 1))
    assert by_t[0.1] < 0.01
    # T=1.0: beta=10, lenient, near the maximum 1
    assert by_t[1.0] == pytest.approx(2 * math.exp(10) / (2 * math.exp(10) + 1))


@pytest.mark.parametrize("bad", [-0.1, 1.5, "hot"])
def test_intent_temperature_outside_unit_interval_is_rejected(bad):
    with pytest.raises(ConfigError, match="temperature"):
        get_metric("intent_answer_relevancy", llm=ScriptedChatModel(script=["{}"]), temperature=bad)


def test_intent_verdict_count_mismatch_is_repaired_once():
    script = [
        {"intent": "i", "statements": ["a", "b"]},
        {"verdicts": [{"verdict": "fully"}]},
        {"verdicts": [{"verdict": "Fully "}, {"verdict": "none"}]},
    ]
    m, llm = metric("intent_answer_relevancy", script)
    res = m.score({"user_input": "q", "response": "r"})
    assert res.value == pytest.approx(0.5) and len(llm.calls) == 3
    assert "expected exactly 2" in llm.calls[2][-1].content


def test_intent_without_statements_is_nan_with_a_reason():
    m, _ = metric("intent_answer_relevancy", [{"intent": "i", "statements": []}])
    res = m.score({"user_input": "q", "response": "r"})
    assert math.isnan(res.value) and "no statement" in res.reason


# --- Context metrics ------------------------------------------------------------------------


def precision_of(verdicts: list[int]) -> float:
    contexts = [f"context {i}" for i in range(len(verdicts))]
    m, llm = metric(
        "llm_context_precision_with_reference",
        [{"verdicts": [{"useful": bool(v)} for v in verdicts]}],
    )
    res = m.score({"user_input": "q", "reference": "r", "retrieved_contexts": contexts})
    assert len(llm.calls) == 1  # every context judged in one call
    return res.value


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([1, 0, 1], (1 / 1 + 2 / 3) / 2),
        ([0, 1, 1], (1 / 2 + 2 / 3) / 2),
        ([1, 1, 0], 1.0),
        ([0, 0, 1], 1 / 3),
        ([0, 0, 0], 0.0),
        ([1], 1.0),
    ],
)
def test_context_precision_is_average_precision(verdicts, expected):
    assert precision_of(verdicts) == pytest.approx(expected)
    # the same number by RAGAS' formula: sum(precision@k * v_k) / (sum(v) + 1e-10)
    ragas = sum(sum(verdicts[: k + 1]) / (k + 1) * v for k, v in enumerate(verdicts))
    assert precision_of(verdicts) == pytest.approx(ragas / (sum(verdicts) + 1e-10))


def test_context_relevance_is_the_mean_of_two_judges_over_two():
    reply = by_prompt(
        {
            "nv_context_relevance.judge1": {"rating": 2, "per_context": [2, 0, 0]},
            "nv_context_relevance.judge2": {"rating": 1, "per_context": [2, 1, 0]},
        }
    )
    m, llm = metric("nv_context_relevance", [reply])
    res = m.score(FULL)
    assert res.value == pytest.approx((2 / 2 + 1 / 2) / 2)
    assert len(llm.calls) == 2
    assert {prompt_name(c) for c in llm.calls} == {
        "nv_context_relevance.judge1",
        "nv_context_relevance.judge2",
    }
    assert res.details["per_context"] == pytest.approx([1.0, 0.25, 0.0])


def test_context_relevance_keeps_the_judge_that_answered():
    reply = by_prompt(
        {"nv_context_relevance.judge1": "no idea", "nv_context_relevance.judge2": {"rating": 1}}
    )
    m, llm = metric("nv_context_relevance", [reply])
    res = m.score(FULL)
    assert res.value == pytest.approx(0.5) and res.details["ratings"] == [None, 1]
    assert len(llm.calls) == 3 and "judge1" in res.details["errors"][0]


def test_context_relevance_nan_when_both_judges_fail():
    m, _ = metric("nv_context_relevance", ['{"rating": 5}'])
    res = m.score(FULL)
    assert math.isnan(res.value) and "judge1" in res.reason and "judge2" in res.reason
    assert "less than or equal to 2" in res.reason


@pytest.mark.parametrize("contexts", [["   "], ["When was the first super bowl?"]])
def test_context_relevance_blank_or_echoed_contexts_score_zero_without_calls(contexts):
    m, llm = metric("nv_context_relevance", [well_formed])
    res = m.score({"user_input": Q, "retrieved_contexts": contexts})
    assert res.value == 0.0 and "RAGAS rule" in res.reason and not llm.calls


def test_context_recall_is_the_attributed_share():
    m, llm = metric(
        "context_recall",
        [
            {
                "classifications": [
                    {"statement": "a", "attributed": True},
                    {"statement": "b", "attributed": False},
                    {"statement": "c", "attributed": 1},
                ]
            }
        ],
    )
    res = m.score(FULL)
    assert res.value == pytest.approx(2 / 3) and len(llm.calls) == 1
    assert len(res.details["classifications"]) == 3


def test_context_recall_parse_failure_is_nan_with_the_parse_error():
    m, llm = metric("context_recall", ["not json", '{"classifications": "all good"}'])
    res = m.score(FULL)
    assert math.isnan(res.value) and len(llm.calls) == 2
    assert "context_recall.attribution" in res.reason and "classifications" in res.reason
    assert res.details["llm_calls"] == 2


def test_context_recall_fenced_reply_is_accepted():
    m, _ = metric(
        "context_recall",
        ['```json\n{"classifications": [{"statement": "a", "attributed": true}]}\n```'],
    )
    assert m.score(FULL).value == 1.0


def test_context_entity_recall_matches_entities_exactly_as_ragas_does():
    reply = by_prompt(
        {
            "context_entity_recall.entities": lambda data: {
                "entities": ["Paris", "France", "52 BC", "Paris"]
                if data["text"].startswith("Paris")
                else ["paris", "France", "Rome"]
            }
        }
    )
    m, llm = metric("context_entity_recall", [reply])
    res = m.score(
        {
            "reference": "Paris is the capital of France, founded in 52 BC.",
            "retrieved_contexts": ["France's capital is Paris.", "Rome is old."],
        }
    )
    # no case-folding ("paris" is not "Paris"), repeats counted: 1 found / 4 listed
    assert res.value == pytest.approx(1 / 4, abs=1e-6) and len(llm.calls) == 2
    none_m, _ = metric("context_entity_recall", [{"entities": []}])
    empty = none_m.score({"reference": "r", "retrieved_contexts": ["c"]})
    assert empty.value == 0.0  # RAGAS: 0 / (0 + 1e-8)


# --- Faithfulness / groundedness ------------------------------------------------------------


def test_faithfulness_is_the_supported_share_in_two_calls():
    m, llm = metric(
        "faithfulness",
        [
            {"statements": ["s1", "s2", "s3"]},
            {"verdicts": [{"verdict": True}, {"verdict": True}, {"verdict": False}]},
        ],
    )
    res = m.score(FULL)
    assert res.value == pytest.approx(2 / 3) and len(llm.calls) == 2
    assert [v["verdict"] for v in res.details["verdicts"]] == [True, True, False]
    assert res.details["statements"] == ["s1", "s2", "s3"]


def test_faithfulness_without_statements_is_nan():
    m, llm = metric("faithfulness", [{"statements": []}])
    res = m.score(FULL)
    assert math.isnan(res.value) and "no statement" in res.reason and len(llm.calls) == 1


def test_groundedness_and_accuracy_use_their_scales():
    ground, _ = metric(
        "nv_response_groundedness",
        [
            by_prompt(
                {
                    "nv_response_groundedness.judge1": {"rating": 2},
                    "nv_response_groundedness.judge2": {"rating": 0},
                }
            )
        ],
    )
    assert ground.score(FULL).value == pytest.approx(0.5)
    acc, llm = metric(
        "nv_accuracy",
        [by_prompt({"nv_accuracy.judge1": {"rating": 4}, "nv_accuracy.judge2": {"rating": 2}})],
    )
    assert acc.score(FULL).value == pytest.approx(0.75)
    swapped = {prompt_name(c): inputs_of(c) for c in llm.calls}
    assert swapped["nv_accuracy.judge1"]["user_answer"] == FULL.response
    assert swapped["nv_accuracy.judge2"]["user_answer"] == FULL.reference  # answers swapped


def test_accuracy_rejects_ratings_off_its_scale():
    acc, _ = metric("nv_accuracy", ['{"rating": 3}'])
    res = acc.score(FULL)
    assert math.isnan(res.value) and "0, 2 or 4" in res.reason


# --- Answer quality -------------------------------------------------------------------------


def test_answer_correctness_weights_f1_and_similarity():
    table = {FULL.response: [1.0, 0.0, 0.0], FULL.reference: [0.6, 0.8, 0.0]}
    reply = by_prompt(
        {
            "statements": lambda d: {
                "statements": ["a", "b", "c"] if d["answer"] == FULL.response else ["a", "b", "d"]
            },
            "answer_correctness.classify": {
                "TP": [{"statement": "a"}, {"statement": "b"}],
                "FP": [{"statement": "c"}],
                "FN": [{"statement": "d"}],
            },
        }
    )
    m, llm = metric("answer_correctness", [reply], table)
    res = m.score(FULL)
    f1 = 2 / 3  # precision 2/3, recall 2/3
    assert res.details["f_score"] == pytest.approx(f1)
    assert res.value == pytest.approx(0.75 * f1 + 0.25 * 0.6)
    assert len(llm.calls) == 3
    only_facts = get_metric("answer_correctness", llm=llm, weights=[1.0, 0.0])  # no embeddings
    assert only_facts.embeddings is None
    with pytest.raises(ConfigError):
        get_metric("answer_correctness", llm=llm, embeddings=HashEmbeddings(), weights=[0, 0])


def test_rubrics_score_uses_sample_rubrics_when_given():
    m, llm = metric("rubrics_score", ['{"feedback": "solid", "score": 4}'])
    res = m.score(FULL)
    assert res.value == 4.0 and res.reason == "solid" and m.value_range == (1.0, 5.0)
    system = llm.calls[0][0].content
    assert all(f"score{i}_description" in system for i in range(1, 6))
    custom = FULL.model_copy(update={"rubrics": {"score1_description": "uses jargon"}})
    m.score(custom)
    assert "uses jargon" in llm.calls[1][0].content
    assert "score5_description" not in llm.calls[1][0].content


def test_rubrics_score_out_of_range_is_repaired_then_nan():
    m, llm = metric("rubrics_score", ['{"score": 9}'])
    res = m.score(FULL)
    assert math.isnan(res.value) and len(llm.calls) == 2 and "score" in res.reason


# --- Interface ------------------------------------------------------------------------------

EXPECTED_CALLS = {
    "answer_relevancy": 1,
    "intent_answer_relevancy": 2,
    "nv_context_relevance": 2,
    "context_recall": 1,
    "llm_context_precision_with_reference": 1,
    "context_entity_recall": 2,
    "faithfulness": 2,
    "nv_response_groundedness": 2,
    "nv_accuracy": 2,
    "answer_correctness": 3,
    "domain_specific_rubrics": 1,
}


def test_every_llm_metric_is_registered_with_its_ragas_name():
    assert {cls.name for cls in llm_metric_classes()} == set(EXPECTED_CALLS)
    assert all(cls.needs_llm for cls in llm_metric_classes())


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_llm_calls_per_sample(name):
    m, llm = metric(name, [well_formed])
    res = m.score(FULL)
    assert res.measured, res.reason
    assert len(llm.calls) == EXPECTED_CALLS[name] == res.details["llm_calls"]
    low, high = m.value_range
    assert low <= res.value <= high


@pytest.mark.parametrize("cls", llm_metric_classes(), ids=lambda c: c.name)
def test_a_missing_column_names_metric_and_column(cls):
    m, _ = metric(cls.name, [well_formed])
    for column in cls.required_columns:
        sample = FULL.model_copy(update={column: None})
        with pytest.raises(MissingColumnsError) as err:
            m.score(sample)
        assert cls.name in str(err.value) and column in str(err.value)


def test_llm_metrics_need_an_llm():
    with pytest.raises(RagloopError, match="needs an LLM"):
        get_metric("faithfulness")


def test_score_works_inside_a_running_event_loop():
    m, _ = metric("faithfulness", [well_formed])

    async def notebook_cell() -> float:
        return m.score(FULL).value  # sync call while a loop is running

    assert asyncio.run(notebook_cell()) == 1.0


def test_prompts_can_be_overridden_per_role():
    custom = Prompt(name="my.recall", instruction="Custom recall instruction.")
    m, llm = metric(
        "context_recall",
        ['{"classifications": [{"statement": "a", "attributed": true}]}'],
        prompt=custom,
    )
    m.score(FULL)
    assert llm.calls[0][0].content.startswith("Custom recall instruction.")
    f, llm2 = metric("faithfulness", ['{"statements": []}'], prompt={"statements": custom})
    f.score(FULL)
    assert llm2.calls[0][0].content.startswith("Custom recall instruction.")
    with pytest.raises(ConfigError, match="roles"):
        metric("faithfulness", [well_formed], prompt={"nope": custom})
    with pytest.raises(ConfigError, match="several prompts"):
        metric("faithfulness", [well_formed], prompt=custom)


def test_a_shared_judge_counts_every_metric():
    llm = ScriptedChatModel(script=[well_formed])
    judge = Judge(llm)
    for name in ("faithfulness", "context_recall"):
        get_metric(name, judge=judge).score(FULL)
    assert judge.calls == 3 and judge.input_tokens == 30
