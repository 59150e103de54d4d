"""Wiring only: add the nodes, connect them with the routing functions, compile."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from ragloop.config import Context
from ragloop.graph.routing import after_correct, after_decide, after_judge
from ragloop.nodes.answer import make_answer
from ragloop.nodes.base import Deps
from ragloop.nodes.correct import make_correct
from ragloop.nodes.decide import make_decide
from ragloop.nodes.draft import make_draft
from ragloop.nodes.judge import make_judge
from ragloop.nodes.retrieve import make_retrieve
from ragloop.nodes.score import make_score
from ragloop.state import State


def recursion_limit(max_iterations: int) -> int:
    """Steps a run can take: 6 straight-line nodes + 3 per corrective loop, plus slack."""
    return 6 + 3 * max_iterations + 4


def build_graph(deps: Deps, checkpointer: Any = None) -> Any:
    """The compiled self-correcting graph over ``deps`` (context schema: ``Context``)."""
    graph = StateGraph(State, context_schema=Context)
    graph.add_node("draft", make_draft(deps))
    graph.add_node("decide", make_decide(deps))
    graph.add_node("retrieve", make_retrieve(deps))
    graph.add_node("judge", make_judge(deps))
    graph.add_node("correct", make_correct(deps))
    graph.add_node("answer", make_answer(deps))
    graph.add_node("score", make_score(deps))
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "decide")
    graph.add_conditional_edges("decide", after_decide, ["retrieve", "answer"])
    graph.add_edge("retrieve", "judge")
    graph.add_conditional_edges("judge", after_judge, ["answer", "correct"])
    graph.add_conditional_edges("correct", after_correct, ["retrieve", "answer"])
    graph.add_edge("answer", "score")
    graph.add_edge("score", END)
    return graph.compile(checkpointer=checkpointer)
