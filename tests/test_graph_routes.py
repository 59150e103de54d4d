"""Every route of the graph with scripted judges, and the termination property."""

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.config import Context
from ragloop.nodes.base import Deps
from ragloop.pipeline import Pipeline
from tests.fakes.retrieval import ListRetriever, ListWeb
from tests.fakes.strategies import ScriptedStrategies


def make(
    outcomes,
    *,
    web=True,
    cap=3,
    draft="",
    draft_relevancy=0.0,
    order=("dense", "sparse", "hybrid"),
    **ctx,
):
    strategies = ScriptedStrategies(outcomes, draft=draft, draft_relevancy=draft_relevancy)
    retrievers = {n: ListRetriever(n) for n in order}
    deps = Deps(strategies=strategies, retrievers=retrievers, web=ListWeb() if web else None)
    return Pipeline(deps, Context(retrievers=order, max_iterations=cap, **ctx)), strategies


def nodes(result):
    return [s["node"] for s in result.steps]


def test_no_retrieval_needed_answers_from_draft():
    pipe, strat = make([], draft="Paris is the capital of France.", draft_relevancy=0.9)
    r = pipe.run("What is the capital of France?")
    assert nodes(r) == ["draft", "decide", "answer", "score"]
    assert r.answer == "Paris is the capital of France." and r.stop_reason == "no_retrieval"
    assert strat.assess_calls == 0 and r.iterations == 0


def test_weak_draft_triggers_retrieval():
    pipe, _ = make(["sufficient"], draft="Something vague.", draft_relevancy=0.2)
    r = pipe.run("q")
    assert nodes(r)[:3] == ["draft", "decide", "retrieve"]
    assert "0.20 < 0.60" in r.steps[1]["detail"]


def test_sufficient_at_once():
    pipe, _ = make(["sufficient"])
    r = pipe.run("q")
    assert nodes(r) == ["draft", "decide", "retrieve", "judge", "answer", "score"]
    assert r.stop_reason == "sufficient" and r.iterations == 0 and r.actions == []
    assert r.citations[0]["id"] == r.contexts[0]["id"]
    assert r.to_sample().retrieved_contexts == [c["text"] for c in r.contexts]


def test_irrelevant_swaps_through_retrievers_then_rewrites():
    pipe, _ = make(["irrelevant"] * 3 + ["sufficient"], correct_order=("swap", "rewrite", "web"))
    r = pipe.run("q")
    done = [a for a in r.actions if not a["action"].startswith("skip")]
    assert [a["action"] for a in done] == ["swap", "swap", "rewrite"]
    assert [a["retriever"] for a in done] == ["sparse", "hybrid", "hybrid"]
    assert done[2]["query"] == "q more1"
    assert r.stop_reason == "sufficient" and r.iterations == 3


def test_irrelevant_then_rewrite_first_when_ordered():
    pipe, strat = make(
        ["irrelevant", "sufficient"],
        correct_order=("rewrite", "swap", "web"),
        prompts={"rewrite": "Use product words."},
    )
    r = pipe.run("q")
    assert r.actions[0]["action"] == "rewrite" and r.actions[0]["retriever"] == "dense"
    assert strat.rewrite_prompts == ["Use product words."]  # the prompt override reaches it


def test_incomplete_then_web():
    pipe, _ = make(["incomplete", "sufficient"])
    r = pipe.run("q")
    assert r.actions[0]["action"] == "web"
    assert any(c["origin"] == "web" for c in r.contexts)
    assert r.stop_reason == "sufficient"


def test_incomplete_without_web_swaps_and_records_skip():
    pipe, _ = make(["incomplete", "sufficient"], web=False)
    r = pipe.run("q")
    assert r.actions[0]["action"] == "skip:web" and "no web search" in r.actions[0]["reason"]
    assert r.actions[1]["action"] == "swap"


def test_cap_reached():
    pipe, _ = make(["irrelevant"], cap=2)
    r = pipe.run("q")
    assert r.stop_reason == "max_iterations" and r.iterations == 2
    assert nodes(r).count("correct") == 2 and nodes(r)[-2:] == ["answer", "score"]


def test_cap_zero_never_corrects():
    pipe, _ = make(["incomplete"], cap=0)
    r = pipe.run("q")
    assert "correct" not in nodes(r) and r.stop_reason == "max_iterations"
    assert r.answer.startswith("Answer from")  # best contexts so far are used


def test_exhausted_when_no_action_left():
    pipe, _ = make(["irrelevant"], cap=10, web=False, order=("dense",), correct_order=("swap",))
    r = pipe.run("q")
    assert r.stop_reason == "exhausted" and r.actions[-1]["action"] == "none"


def test_relevant_contexts_kept_across_iterations_and_deduplicated():
    pipe, _ = make(["incomplete", "sufficient"])
    r = pipe.run("q")
    ids = [c["id"] for c in r.contexts]
    assert len(ids) == len(set(ids)) == 4  # 2 from dense + 2 from the web


def test_second_response_mode_is_recorded():
    pipe, _ = make(["sufficient"], judge_mode="second_response")
    r = pipe.run("q", reference="An answer.")
    judge_step = next(s for s in r.steps if s["node"] == "judge")
    assert "development mode" in judge_step["detail"]


@settings(max_examples=60, deadline=None)
@given(
    outcomes=st.lists(st.sampled_from(["sufficient", "irrelevant", "incomplete"]), max_size=12),
    cap=st.integers(0, 5),
    web=st.booleans(),
    order=st.permutations(["rewrite", "swap", "web"]),
)
def test_loop_always_terminates_within_cap_and_never_repeats(outcomes, cap, web, order):
    pipe, _ = make(outcomes, cap=cap, web=web, correct_order=tuple(order))
    r = asyncio.run(pipe.arun("a question"))
    assert r.iterations <= cap
    corrective = [a for a in r.actions if a["action"] in ("rewrite", "swap", "web")]
    assert len(corrective) <= cap
    pairs = [(a["retriever"], a["query"]) for a in corrective]
    first = ("dense", "a question")
    assert len(set(pairs + [first])) == len(pairs) + 1
    assert r.stop_reason in ("sufficient", "max_iterations", "exhausted")
    assert r.answer
