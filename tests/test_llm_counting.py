"""LLM calls are counted only when a run may make one: offline runs skip the callback cost."""

from __future__ import annotations

from typing import Any

import pytest

from ragloop.nodes.base import Deps, calls_llm, may_call_llm
from ragloop.nodes.condense import HeuristicCondenser
from ragloop.retrievers.adapters import LangChainRetriever
from ragloop.retrievers.registry import LazyRetrievers


class _Offline:
    calls_llm = False


class _Unknown:  # a caller's role that declares nothing
    pass


def _deps(role: Any = None, **kw: Any) -> Deps:
    return Deps(strategies=role or _Offline(), **kw)


def test_an_object_that_declares_nothing_is_taken_to_call_a_model() -> None:
    assert calls_llm(_Unknown()) and not calls_llm(_Offline())
    assert not calls_llm(HeuristicCondenser())


def test_offline_parts_need_no_counting_and_any_unknown_part_does() -> None:
    assert not may_call_llm(_deps(retrievers={"r": _Offline()}))
    assert may_call_llm(_deps(_Unknown(), retrievers={"r": _Offline()}))
    assert may_call_llm(_deps(retrievers={"r": _Unknown()}))
    assert may_call_llm(_deps(condenser=_Unknown()))
    assert may_call_llm(_deps(web=_Unknown()))
    # only the retrievers the run may use count
    assert not may_call_llm(_deps(retrievers={"a": _Offline(), "b": _Unknown()}), ["a"])


def test_lazy_retrievers_answer_without_building() -> None:
    lazy = LazyRetrievers(index=None)
    assert not lazy.calls_llm("dense") and not lazy.calls_llm("hybrid")
    assert lazy.calls_llm("a-plugin-nobody-built")
    assert not lazy._built  # nothing was built to answer
    assert not may_call_llm(_deps(retrievers=lazy), ["dense", "sparse", "hybrid"])


def test_a_wrapped_langchain_retriever_may_call_a_model() -> None:
    assert LangChainRetriever.calls_llm is True


@pytest.mark.parametrize("offline", [True, False])
def test_pipeline_counts_calls_only_when_a_model_may_be_called(
    offline: bool, monkeypatch: pytest.MonkeyPatch, data_dir: Any
) -> None:
    from ragloop.pipeline import build_pipeline

    pipe = build_pipeline(demo=True)
    seen: list[Any] = []
    real = pipe.graph.ainvoke

    async def spy(inputs: Any, config: Any = None, **kw: Any) -> Any:
        seen.append(dict(config or {}))
        return await real(inputs, config=config, **kw)

    monkeypatch.setattr(pipe.graph, "ainvoke", spy)
    if not offline:  # a role that may call a model: the run is counted
        monkeypatch.setattr(pipe.deps.strategies, "calls_llm", True)
    result = pipe.run("How do I clear DK-04 on the Kestrel Dock?")
    assert result.answer and result.llm_calls == 0
    assert ("callbacks" in seen[0]) is (not offline)
