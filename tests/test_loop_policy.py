"""The policy follows what the judge saw, stops when the evidence is found, and terminates."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.config import Context
from ragloop.nodes.answer import judge_order
from ragloop.nodes.base import Assessment, Deps
from ragloop.nodes.correct import REWRITE_AFTER_ALL, diagnose, preferred
from ragloop.pipeline import Pipeline
from tests.fakes.retrieval import ListRetriever, ListWeb
from tests.fakes.strategies import ScriptedStrategies

MISS_NAME = {"names": 1.0, "name_found": 0.0, "terms_found": 0.9, "semantic": 0.5}
GAP = {"names": 0.0, "name_found": 0.0, "terms_found": 0.2, "semantic": 0.4}
WEAK = {"names": 0.0, "name_found": 0.0, "terms_found": 0.8, "semantic": 0.4}


class SeeingStrategies(ScriptedStrategies):
    """Scripted verdicts plus the signals a seeing judge would report with them."""

    def __init__(self, outcomes, signals):
        super().__init__(outcomes)
        self.signals = list(signals)

    async def assess(self, question, candidates, kept, claims, keep) -> Assessment:
        n = self.assess_calls
        got = await super().assess(question, candidates, kept, claims, keep)
        got.signals = dict(self.signals[min(n, len(self.signals) - 1)]) if self.signals else {}
        return got


def run(outcomes, signals, *, web=False, cap=3, order=("hybrid", "dense", "sparse")):
    strategies = SeeingStrategies(outcomes, signals)
    retrievers = {n: ListRetriever(n) for n in order}
    deps = Deps(strategies=strategies, retrievers=retrievers, web=ListWeb() if web else None)
    return Pipeline(deps, Context(retrievers=order, max_iterations=cap)).run("a question")


def done(result):
    return [
        (a["action"], a["retriever"])
        for a in result.actions
        if ":" not in a["action"] and a["action"] != "none"
    ]


def test_diagnosis_in_words():
    assert diagnose({}) == ""
    assert diagnose(MISS_NAME) == "lexical-miss"
    assert diagnose(GAP) == "vocabulary-gap"
    assert diagnose(WEAK) == "weak"
    assert preferred("weak", {"dense", "sparse"})[0] == "hybrid"  # they disagree: fuse


def test_good_first_retrieval_costs_nothing_more():
    r = run(["sufficient"], [WEAK])
    assert r.iterations == 0 and r.actions == [] and r.stop_reason == "sufficient"


def test_lexical_miss_goes_to_bm25_then_the_other_rankings_then_answers():
    r = run(["irrelevant", "irrelevant", "irrelevant", "sufficient"], [MISS_NAME])
    assert done(r)[0] == ("swap", "sparse")
    assert done(r) == [("swap", "sparse"), ("swap", "dense")]  # each ranking sees the question
    assert "lexical-miss" in r.actions[0]["reason"]
    # then no offline rewrite: it rarely finds more once every ranking has looked
    skipped = [a for a in r.actions if a["action"] == "skip:rewrite"]
    assert skipped and skipped[0]["reason"] == REWRITE_AFTER_ALL
    assert r.stop_reason == "exhausted" and r.iterations == 2


def test_an_explicit_order_or_a_single_retriever_still_rewrites():
    r = run(["irrelevant"] * 3 + ["sufficient"], [MISS_NAME], order=("hybrid",))
    assert done(r)[0][0] == "rewrite"  # nothing else to try: other words
    strategies = SeeingStrategies(["irrelevant"] * 4 + ["sufficient"], [WEAK])
    order = ("hybrid", "dense", "sparse")
    deps = Deps(strategies=strategies, retrievers={n: ListRetriever(n) for n in order})
    ctx = Context(retrievers=order, max_iterations=3, correct_order=("swap", "rewrite"))
    r = Pipeline(deps, ctx).run("a question")
    assert [a for a, _ in done(r)] == ["swap", "swap", "rewrite"]


def test_vocabulary_gap_goes_to_dense():
    r = run(["irrelevant", "sufficient"], [GAP])
    assert done(r) == [("swap", "dense")]


def test_disagreeing_rankings_are_fused():
    r = run(["irrelevant"] * 3 + ["sufficient"], [WEAK], order=("dense", "sparse", "hybrid"))
    assert [x[1] for x in done(r)][:2] == ["sparse", "hybrid"]


def test_ranking_is_on_one_scale():
    kept = [
        {"id": "bm25", "text": "", "grade": 1, "score": 7.5, "evidence": 0.40},
        {"id": "rrf", "text": "", "grade": 2, "score": 0.03, "evidence": 0.70},
        {"id": "cos", "text": "", "grade": 2, "score": 0.41, "evidence": 0.90},
    ]
    assert [c["id"] for c in judge_order(kept)] == ["cos", "rrf", "bm25"]
    no_evidence = [dict(c, evidence=0.0) for c in kept]  # an LLM judge: found order kept
    assert [c["id"] for c in judge_order(no_evidence)] == ["rrf", "cos", "bm25"]


def test_a_nameless_question_reads_the_chunk_that_says_what_its_subject_does_first():
    # before: "How do I rebuild a bloated index?" read the chunk echoing its words first, and
    # the one that says what REINDEX does came after the k the answer reads
    title = "REINDEX › Description"
    echo = {"id": "echo", "title": title, "grade": 1, "evidence": 0.40}
    echo["text"] = f"# {title}\n\nAn index can become bloated or corrupted over time."
    does = {"id": "does", "title": title, "grade": 1, "evidence": 0.30}
    does["text"] = f"# {title}\n\nREINDEX rebuilds an index from the data in its table."
    assert [c["id"] for c in judge_order([echo, does])] == ["echo", "does"]
    assert [c["id"] for c in judge_order([echo, does], nameless=True)] == ["does", "echo"]
    # grades still come first, and without evidence (an LLM judge) the found order holds
    graded = dict(echo, grade=2)
    assert [c["id"] for c in judge_order([does, graded], nameless=True)] == ["echo", "does"]
    bare = [{k: v for k, v in c.items() if k != "evidence"} for c in (echo, does)]
    assert [c["id"] for c in judge_order(bare, nameless=True)] == ["echo", "does"]


SIGNALS = st.fixed_dictionaries(
    {
        "names": st.sampled_from([0.0, 1.0, 2.0]),
        "name_found": st.floats(0, 1),
        "terms_found": st.floats(0, 1),
        "semantic": st.floats(0, 1),
    }
)


@settings(max_examples=60, deadline=None)
@given(
    outcomes=st.lists(st.sampled_from(["sufficient", "irrelevant", "incomplete"]), max_size=10),
    signals=st.lists(SIGNALS, max_size=10),
    cap=st.integers(0, 5),
    web=st.booleans(),
)
def test_signal_policy_terminates_within_cap_and_never_repeats(outcomes, signals, cap, web):
    strategies = SeeingStrategies(outcomes, signals)
    order = ("hybrid", "dense", "sparse")
    retrievers = {n: ListRetriever(n) for n in order}
    deps = Deps(strategies=strategies, retrievers=retrievers, web=ListWeb() if web else None)
    pipe = Pipeline(deps, Context(retrievers=order, max_iterations=cap))
    r = asyncio.run(pipe.arun("a question"))
    corrective = [a for a in r.actions if a["action"] in ("rewrite", "swap", "web")]
    assert r.iterations <= cap and len(corrective) <= cap
    pairs = [("hybrid", "a question")] + [(a["retriever"], a["query"]) for a in corrective]
    assert len(set(pairs)) == len(pairs)
    assert r.stop_reason in ("sufficient", "max_iterations", "exhausted") and r.answer
