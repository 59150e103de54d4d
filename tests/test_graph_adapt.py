"""The node and route adapters (graph/adapt.py) and the memos the loop's lexical reading keeps:
the same results as without them, under ``invoke`` and ``ainvoke``."""

from __future__ import annotations

import asyncio
import math
import threading
from collections import OrderedDict
from typing import Any, TypedDict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.graph import END, START, StateGraph

from ragloop import text
from ragloop.graph.adapt import both_ways, json_safe, route
from ragloop.nodes import evidence
from ragloop.nodes.offline_judge import _unit
from ragloop.text import split_sentences


def _expected(value: Any) -> Any:
    """What json_safe promises: NaN/inf floats as None, tuples as lists, containers as plain
    dicts and lists, everything else as it is."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expected(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal with the same container and float types all the way down (None == None)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.builds(np.float64, st.floats(allow_nan=True, allow_infinity=True)),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=4),
        st.dictionaries(st.text(max_size=3), inner, max_size=4).map(OrderedDict),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_json_safe_gives_what_a_full_copy_gives(value):
    assert _same(json_safe(value), _expected(value))


def test_json_safe_skips_the_copy_only_when_nothing_changes():
    clean = {"contexts": [{"id": "a", "score": 0.5, "grade": 1}], "steps": [], "n": None}
    assert json_safe(clean) is clean
    dirty = {"contexts": [{"id": "a", "score": math.nan}], "steps": [{"n": 1}]}
    out = json_safe(dirty)
    assert out == {"contexts": [{"id": "a", "score": None}], "steps": [{"n": 1}]}
    assert math.isnan(dirty["contexts"][0]["score"])  # the node's own value is left alone
    assert json_safe({"pair": (1, 2)}) == {"pair": [1, 2]}


class _S(TypedDict, total=False):
    n: int
    seen: list[str]


def _graph() -> Any:
    """decide -> work (looped by a route until n = 2) -> answer; each node notes whether its
    LLM calls would be tagged nostream and which thread the route ran on."""
    threads: list[int] = []

    def note(name: str) -> str:
        tags = (var_child_runnable_config.get() or {}).get("tags") or []
        return f"{name}:{'quiet' if TAG_NOSTREAM in tags else 'streamed'}"

    async def work(state: _S, runtime: Any) -> dict[str, Any]:
        return {"n": state.get("n", 0) + 1, "seen": [*state.get("seen", []), note("work")]}

    async def answer(state: _S, runtime: Any, config: Any) -> dict[str, Any]:
        assert config.get("configurable") is not None  # the run's config reaches the node
        return {"seen": [*state.get("seen", []), note("answer")]}

    def again(state: _S) -> str:
        threads.append(threading.get_ident())
        return "work" if state["n"] < 2 else "answer"  # reads the node's own update

    g = StateGraph(_S)
    g.add_node("work", both_ways("work", work))
    g.add_node("answer", both_ways("answer", answer, stream=True))
    g.add_edge(START, "work")
    g.add_conditional_edges("work", route(again), ["work", "answer"])
    g.add_edge("answer", END)
    return g.compile(), threads


def test_nodes_and_routes_run_the_same_under_invoke_and_ainvoke():
    want = {"n": 2, "seen": ["work:quiet", "work:quiet", "answer:streamed"]}
    graph, _ = _graph()
    assert graph.invoke({"n": 0}) == want

    async def run() -> tuple[dict[str, Any], int]:
        graph, threads = _graph()
        out = await graph.ainvoke({"n": 0})
        assert set(threads) == {threading.get_ident()}  # the route never left the loop
        return out, len(threads)

    out, routed = asyncio.run(run())
    assert out == want and routed == 2


def test_split_sentences_hands_out_a_fresh_list_every_time():
    text = "One sentence here. Another one there."
    first = split_sentences(text)
    first.append("changed by a caller")
    assert split_sentences(text) == ["One sentence here.", "Another one there."]


def test_the_question_terms_memo_is_keyed_on_the_corpus_words_too():
    q = "How do I drop a procedure in PostgreSQL?"
    plain = evidence.terms(q)
    own = evidence.terms(q, frozenset({"postgresql"}))
    assert "postgresql" in plain and "postgresql" not in own
    assert evidence.terms(q) == plain  # asked again: the first answer, not the other one
    plain.append("changed by a caller")
    assert evidence.terms(q) != plain


def test_forget_empties_every_lexical_memo():
    evidence.lexical("what is a widget?", "A widget is a part. It fits.", "Widget")
    evidence.forget()
    assert evidence.lexical.cache_info().currsize == 0
    assert evidence.stems_of.cache_info().currsize == 0
    assert text._sentences.cache_info().currsize == 0


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_the_judges_clip_is_numpys(x):
    got, want = _unit(x), float(np.clip(x, 0.0, 1.0))
    assert (math.isnan(got) and math.isnan(want)) or (
        got == want and math.copysign(1, got) == math.copysign(1, want)
    )
