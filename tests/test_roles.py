"""Roles, not one interface: each of drafter, judge, rewriter, answerer and scorer is swappable
alone, the settings pick the judge and the answer separately, and the temperature setting
reaches the score the loop reports."""

from __future__ import annotations

import asyncio

import pytest

from ragloop.config import Context, load_settings
from ragloop.errors import ConfigError
from ragloop.nodes.base import ROLES, Deps
from ragloop.nodes.llm import LLMStrategies
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline, roles_for
from ragloop.state import add_step
from tests.fakes.retrieval import ListRetriever
from tests.fakes.strategies import ScriptedStrategies


class CountingAnswerer:
    """An answerer of its own: says which contexts it read."""

    def __init__(self) -> None:
        self.calls = 0

    async def answer(self, question, contexts, prompt=None):
        self.calls += 1
        return f"read {len(contexts)}: " + contexts[0]["id"] + " [1]", [1]


def test_strategies_fill_every_role_not_given():
    scripted = ScriptedStrategies(["sufficient"])
    answerer = CountingAnswerer()
    deps = Deps(strategies=scripted, retrievers={}, answerer=answerer)
    assert deps.answerer is answerer
    assert all(getattr(deps, r) is scripted for r in ROLES if r != "answerer")


def test_a_missing_role_is_a_clear_error():
    with pytest.raises(ConfigError, match="no drafter, judge, rewriter, scorer"):
        Deps(retrievers={}, answerer=CountingAnswerer())


def test_one_role_swapped_alone_runs_in_the_graph():
    judge = ScriptedStrategies(["sufficient"])  # plays the judge only
    answerer = CountingAnswerer()
    deps = Deps(
        drafter=judge,
        judge=judge,
        rewriter=judge,
        scorer=judge,
        answerer=answerer,
        retrievers={"dense": ListRetriever("dense")},
    )
    result = Pipeline(deps, Context(retrievers=("dense",))).run("What is d1 about?")
    assert answerer.calls == 1 and judge.assess_calls == 1
    assert result.answer.startswith("read ") and result.stop_reason == "sufficient"


def test_settings_pick_the_judge_and_the_answer_separately(hash_embeddings, monkeypatch):
    offline = OfflineStrategies(hash_embeddings)
    model = object()  # never called here: the roles are only chosen
    monkeypatch.setattr(LLMStrategies, "__init__", lambda self, *a, **k: None)
    mixed = roles_for(load_settings(answer="extractive"), model, hash_embeddings, offline)
    assert mixed["answerer"] is offline and isinstance(mixed["judge"], LLMStrategies)
    other = roles_for(load_settings(judge="offline"), model, hash_embeddings, offline)
    assert other["judge"] is offline and isinstance(other["answerer"], LLMStrategies)
    assert roles_for(load_settings(), None, hash_embeddings, offline) == {"strategies": offline}


def test_an_llm_role_without_a_model_says_what_to_set(hash_embeddings):
    offline = OfflineStrategies(hash_embeddings)
    with pytest.raises(ConfigError, match="judge='llm' needs a chat model: set RAGLOOP_LLM"):
        roles_for(load_settings(judge="llm"), None, hash_embeddings, offline)


def test_temperature_reaches_the_reported_answer_relevancy(hash_embeddings):
    """A strict T weighs an off-topic sentence harder than a lenient one (DESIGN 5.2)."""
    offline = OfflineStrategies(hash_embeddings)
    question = "How do I clear error DK-04 on the dock?"
    answer = (
        "To clear error DK-04 on the dock, unplug it and clean the duct. "
        "Bananas are rich in potassium and grow in warm countries."
    )

    def at(t: float) -> float:
        return asyncio.run(offline.answer_relevancy(question, answer, t)).value

    strict, mean, lenient = at(0.1), at(0.5), at(1.0)
    assert strict < mean < lenient


def test_the_score_node_reads_temperature_from_the_run_context(hash_embeddings):
    class Fixed:
        async def answer(self, question, contexts, prompt=None):
            return (
                "To clear error DK-04 on the dock, unplug it and clean the duct [1]. "
                "Bananas are rich in potassium and grow in warm countries [1].",
                [1],
            )

    deps = Deps(
        strategies=ScriptedStrategies(["sufficient"]),
        scorer=OfflineStrategies(hash_embeddings),
        answerer=Fixed(),
        retrievers={"dense": ListRetriever("dense")},
    )
    question = "How do I clear error DK-04 on the dock?"

    def score(t: float) -> float:
        ctx = Context(retrievers=("dense",), temperature=t)
        return Pipeline(deps, ctx).run(question).scores["answer_relevancy"]

    assert score(0.1) < score(1.0)


def test_steps_are_fields_a_program_can_read():
    deps = Deps(
        strategies=ScriptedStrategies(["irrelevant", "sufficient"]),
        retrievers={n: ListRetriever(n) for n in ("dense", "sparse")},
    )
    result = Pipeline(deps, Context(retrievers=("dense", "sparse"), k=2)).run("What is d1?")
    first = next(s for s in result.steps if s["node"] == "retrieve")
    assert (first["action"], first["retriever"], first["k"]) == ("retrieve", "dense", 2)
    assert first["query"] == "What is d1?" and first["n"] == 2
    judged = [s for s in result.steps if s["node"] == "judge"]
    assert [s["action"] for s in judged] == ["irrelevant", "sufficient"]
    swap = next(s for s in result.steps if s["node"] == "correct")
    assert swap["action"] in {"swap", "rewrite"} and swap["reason"]
    with pytest.raises(TypeError, match="unknown step field"):
        add_step({}, "retrieve", "x", retriver="dense")


def test_one_settings_schema_gives_the_context_its_fields_and_defaults():
    import dataclasses

    from ragloop.config import RUN_FIELDS, Settings
    from ragloop.experiments.grid import AXES

    names = {f.name for f in dataclasses.fields(Context)} - {"correct_order", "prompts"}
    assert names == set(RUN_FIELDS) == set(AXES)
    settings, ctx = Settings(), Context()
    for name in RUN_FIELDS:
        want = getattr(settings, name)
        assert getattr(ctx, name) == (tuple(want) if isinstance(want, list) else want), name
    assert Context.from_settings(Settings(k=7, temperature=0.1)).temperature == 0.1


def test_grade2_evidence_meets_the_default_recall_threshold_with_no_copied_constant():
    from ragloop.nodes.offline_judge import CALIBRATIONS, recall_of

    for cal in CALIBRATIONS.values():
        assert recall_of(cal, cal.grade2) == pytest.approx(Context().recall_threshold)
        assert recall_of(cal, cal.grade2 - 0.01) < Context().recall_threshold
