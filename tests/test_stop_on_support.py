"""The loop stops "sufficient" once the answer the passages read would give is sure enough
(``Answerer.support`` against its fitted level), and only then; the level is fitted like the
judge's stop level (``calibration.fit.precise_level``) and checked when a model file is read."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from ragloop.calibration.fit import precise_level
from ragloop.config import Context
from ragloop.errors import ConfigError
from ragloop.nodes.answer_model import Abstention, AnswerModel, from_dict
from ragloop.nodes.base import Deps
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline
from ragloop.state import ContextItem
from tests.fakes.embeddings import HashEmbeddings
from tests.fakes.retrieval import ListRetriever
from tests.fakes.strategies import ScriptedStrategies


class SureAnswerer:
    """An answerer that says how surely the passages it would read answer."""

    def __init__(self, support: float, level: float) -> None:
        self.value, self.level = support, level
        self.asked: list[int] = []

    async def answer(self, question, contexts, prompt=None):
        return "From the passages [1]", [1]

    async def support(self, question, contexts):
        self.asked.append(len(contexts))
        return self.value, self.level


def run(answerer: object, **kw: object):  # type: ignore[no-untyped-def]
    judge = ScriptedStrategies(["incomplete"])  # never "sufficient" by its own recall
    deps = Deps(
        drafter=judge,
        judge=judge,
        rewriter=judge,
        scorer=judge,
        answerer=answerer,
        retrievers={n: ListRetriever(n) for n in ("dense", "sparse")},
    )
    ctx = Context(retrievers=("dense", "sparse"), max_iterations=3, k=2)
    return Pipeline(deps, ctx).run("What is d1 about?", **kw), judge


def test_a_sure_answer_stops_the_loop_at_the_first_judgment():
    answerer = SureAnswerer(0.97, 0.9)
    result, judge = run(answerer)
    assert result.stop_reason == "sufficient" and judge.assess_calls == 1
    assert answerer.asked == [2]  # asked about the k passages the answer reads
    step = next(s for s in result.steps if s["node"] == "judge")
    assert "answer's support 0.97 >= 0.90 (fitted)" in step["detail"]


def test_an_unsure_answer_lets_the_loop_go_on():
    result, judge = run(SureAnswerer(0.6, 0.9))
    assert result.stop_reason != "sufficient" and judge.assess_calls > 1


def test_an_answerer_without_support_or_with_a_reference_is_not_asked():
    class Plain:
        async def answer(self, question, contexts, prompt=None):
            return "Plain [1]", [1]

    result, judge = run(Plain())
    assert result.stop_reason != "sufficient" and judge.assess_calls > 1
    sure = SureAnswerer(0.99, 0.5)
    result, _ = run(sure, reference="d1 is about dogs.")  # development mode: recall decides
    assert sure.asked == [] and result.stop_reason != "sufficient"


def _model(stop_support: float | None) -> AnswerModel:
    judged = Abstention({"cosine_max": 4.0, "best": 2.0}, -1.0, 0.5)
    return AnswerModel(
        coef={"cosine": 5.0}, intercept=-2.0, abstain={"judged": judged},
        stop_support=stop_support,
    )  # fmt: skip


def _contexts(evidence: bool) -> list[ContextItem]:
    text = "# Dogs\n\nDogs are loyal animals that like long walks."
    item = ContextItem(id="a", title="Dogs", text=text)
    return [ContextItem(**item, evidence=0.7)] if evidence else [item]


def test_the_offline_answerer_offers_support_only_with_a_fitted_level_and_judged_passages():
    def support(model, contexts):  # type: ignore[no-untyped-def]
        answerer = OfflineStrategies(HashEmbeddings(dim=64), answer_model=model)
        return asyncio.run(answerer.support("What are dogs like?", contexts))

    found = support(_model(0.8), _contexts(True))
    assert found is not None and 0.0 <= found[0] <= 1.0 and found[1] == 0.8
    assert support(_model(None), _contexts(True)) is None  # no fitted level: never stops on it
    assert support(_model(0.8), _contexts(False)) is None  # no judge evidence: another scale
    assert support(None, _contexts(True)) is None  # hand-set weights


def test_the_level_is_read_back_and_checked():
    data = _model(0.93).to_dict()
    assert from_dict(data).stop_support == 0.93
    assert from_dict({**data, "stop_support": None}).stop_support is None
    for bad in (0.0, 1.5, "high", True):
        with pytest.raises(ConfigError, match="stop_support"):
            from_dict({**data, "stop_support": bad})


def test_the_fitted_level_is_the_lowest_precise_enough_over_enough_questions():
    rng = np.random.default_rng(3)
    value = rng.uniform(0, 1, 400)
    hit = rng.uniform(0, 1, 400) < value  # the surer, the likelier a hit
    train = {f"q{i}": (float(v), bool(h)) for i, (v, h) in enumerate(zip(value, hit, strict=True))}
    levels = np.round(np.arange(0.0, 1.0001, 0.01), 2)
    level, report = precise_level(train, train, levels, precision=0.8, support=30)
    assert level is not None
    above = [h for v, h in train.values() if v >= level]
    assert np.mean(above) >= 0.8 and len(above) >= 30
    lower = round(level - 0.01, 2)
    below = [h for v, h in train.values() if v >= lower]
    assert np.mean(below) < 0.8 or len(below) < 30
    assert report["train"]["questions_stopped"] == len(above)
    assert precise_level(train, train, levels, precision=1.01, support=30)[0] is None
