"""Wiring only: add the nodes, connect them with the routing functions, compile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from ragloop.config import Context
from ragloop.graph.adapt import both_ways, route
from ragloop.graph.routing import after_correct, after_decide, after_judge
from ragloop.nodes.answer import make_answer
from ragloop.nodes.base import Deps
from ragloop.nodes.correct import make_correct
from ragloop.nodes.decide import make_decide
from ragloop.nodes.draft import make_draft
from ragloop.nodes.inputs import known_keys
from ragloop.nodes.judge import make_judge
from ragloop.nodes.retrieve import make_retrieve
from ragloop.nodes.score import make_score
from ragloop.nodes.turn import make_condense, make_remember
from ragloop.state import InputState, OutputState, State

#: the nodes whose LLM calls stream to ``stream_mode="messages"`` (the others are tagged
#: ``nostream``); ``remember`` adds the answer as one message, which is how an offline
#: (extractive) answer reaches a chat UI
STREAMED = frozenset({"answer", "remember"})


def _then(first: Callable[[Any], Any], second: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: second(first(value))


def recursion_limit(max_iterations: int) -> int:
    """Steps a run can take: 8 straight-line nodes + 3 per corrective loop, plus slack."""
    return 8 + 3 * max_iterations + 4


def build_graph(
    deps: Deps,
    checkpointer: Any = None,
    context_schema: Any = Context,
    output_schema: Any = OutputState,
) -> Any:
    """The compiled self-correcting graph over ``deps`` (context schema: ``Context``, or a
    subclass carrying a server's settings as its defaults).

    A run is one chat turn: ``condense`` opens it (follow-up -> standalone question) and
    ``remember`` closes it (answer logged in ``messages``, per-turn inputs cleared). Clients
    see the narrow ``InputState``/``OutputState``; ``output_schema=State`` returns the loop's
    internals too (``Pipeline`` and ``ChatSession`` build a ``RunResult`` from them). Only the
    answer step's LLM tokens reach ``stream_mode="messages"`` (with the answer as an
    ``AIMessage`` at the end of the turn), so a chat UI never shows the judge's replies.
    """
    graph = StateGraph(
        State,
        context_schema=context_schema,
        input_schema=InputState,
        output_schema=output_schema,
    )
    nodes = {
        "condense": make_condense(deps),
        "draft": make_draft(deps),
        "decide": make_decide(deps),
        "retrieve": make_retrieve(deps),
        "judge": make_judge(deps),
        "correct": make_correct(deps),
        "answer": make_answer(deps),
        "score": make_score(deps),
        "remember": make_remember(deps),
    }
    for name, node in nodes.items():
        graph.add_node(name, both_ways(name, node, stream=name in STREAMED))
    graph.add_edge(START, "condense")
    graph.add_edge("condense", "draft")
    graph.add_edge("draft", "decide")
    graph.add_conditional_edges("decide", route(after_decide), ["retrieve", "answer"])
    graph.add_edge("retrieve", "judge")
    graph.add_conditional_edges("judge", route(after_judge), ["answer", "correct"])
    graph.add_conditional_edges("correct", route(after_correct), ["retrieve", "answer"])
    graph.add_edge("answer", "score")
    graph.add_edge("score", "remember")
    graph.add_edge("remember", END)
    compiled = graph.compile(checkpointer=checkpointer)
    # the input is checked where LangGraph reads it (the START node), before any key of it
    # is dropped: a misspelt key is named instead of silently ignored
    start, check = compiled.nodes[START], known_keys(InputState.__optional_keys__)
    mapper = check if start.mapper is None else _then(check, start.mapper)
    compiled.nodes[START] = start.copy({"mapper": mapper})
    return compiled
