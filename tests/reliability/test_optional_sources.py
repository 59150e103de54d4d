"""An optional source that fails (HTTP 500, a hang, a server down) is skipped with its reason."""

from __future__ import annotations

import socket

import pytest

from ragloop.config import Context
from ragloop.nodes.base import Deps
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline
from ragloop.retrievers.registry import get_retriever
from ragloop.retrievers.web import TavilyWebSearch
from tests.fakes.tavily_server import FakeTavily

QUESTION = "What equipment does room RM-12 have, and how many people does it seat?"
PAGE = {"url": "https://example.test/p", "title": "P", "content": "Unrelated web text."}


def _pipeline(index, embeddings, web=None, extra=None, order=("web", "swap"), names=None):
    retrievers = {n: get_retriever(n, index, k=3) for n in ("dense", "sparse", "hybrid")}
    retrievers.update(extra or {})
    deps = Deps(
        strategies=OfflineStrategies(embeddings),
        retrievers=retrievers,
        web=web,
        source_timeout_s=2.0,
    )
    ctx = Context(
        max_iterations=2,
        correct_order=order,
        recall_threshold=1.0,
        retrievers=names or ("dense", "sparse", "hybrid"),
    )
    return Pipeline(deps, ctx)


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _check(result) -> None:
    assert "RM-12" in result.answer, "the answer must come from the corpus"
    assert any(a["action"] == "unavailable" for a in result.actions), result.actions
    assert any("unavailable" in s["detail"] for s in result.steps)


@pytest.mark.parametrize("failure", ["500", "hang", "down"])
def test_a_failing_web_search_is_skipped_and_the_corpus_answers(
    failure, fixture_index, wordllama, ledger
):
    if failure == "down":
        web = TavilyWebSearch("tvly-x", _closed_port(), timeout=1.0)
        result = _pipeline(fixture_index, wordllama, web).run(QUESTION)
    else:
        status, delay = (500, 0.0) if failure == "500" else (200, 5.0)
        with FakeTavily([PAGE], status=status, delay=delay) as fake:
            web = TavilyWebSearch("tvly-x", fake.url, timeout=1.0)
            result = _pipeline(fixture_index, wordllama, web).run(QUESTION)
    ledger("optional sources: failing web skipped", 1)
    _check(result)
    # the web is not asked again once it failed in this run
    assert sum(1 for s in result.steps if s["node"] == "retrieve" and "web" in s["detail"]) == 1


class _Broken:
    """A plug-in retriever whose backend is down, or hangs."""

    name = "plugin"

    def __init__(self, hang: bool):
        self.hang = hang

    async def asearch(self, query, k):
        if self.hang:
            import asyncio

            await asyncio.sleep(60)
        raise ConnectionError("backend at 10.0.0.1 refused the connection")


@pytest.mark.parametrize("hang", [False, True])
def test_a_failing_plugin_retriever_is_skipped(hang, fixture_index, wordllama, ledger):
    pipe = _pipeline(
        fixture_index,
        wordllama,
        extra={"plugin": _Broken(hang)},
        order=("swap",),
        names=("plugin", "dense", "sparse"),
    )
    result = pipe.run(QUESTION)
    ledger("optional sources: failing plug-in retriever skipped", 1)
    _check(result)
    assert result.contexts and "RM-12" in result.answer
