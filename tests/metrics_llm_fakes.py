"""Helpers for scripting LLM judges: which prompt a request carries, its inputs, a fitting reply."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage

from ragloop.eval.judge import Prompt
from ragloop.eval.metrics._llm import LLMMetric
from ragloop.eval.metrics.base import REGISTRY, metric_names


def all_llm_metric_classes() -> list[type[LLMMetric]]:
    """Every registered LLM-judged metric class (single- and multi-turn), once, by name."""
    metric_names()  # import every metric module
    return [
        REGISTRY[n]
        for n in sorted(REGISTRY)
        if issubclass(REGISTRY[n], LLMMetric) and REGISTRY[n].name == n  # aliases left out
    ]


def llm_metric_classes() -> list[type[LLMMetric]]:
    """The LLM-judged metrics that score single-turn samples (multi-turn ones have their own)."""
    return [cls for cls in all_llm_metric_classes() if cls.multi_turn is not True]


def known_prompts() -> dict[str, Prompt]:
    """The default prompts of every LLM metric, by prompt name."""
    return {p.name: p for cls in all_llm_metric_classes() for p in cls.prompts.values()}


def prompt_name(messages: list[BaseMessage]) -> str:
    """The name of the default prompt whose instruction opens the system message."""
    system = str(messages[0].content)
    for name, prompt in known_prompts().items():
        if system.startswith(prompt.instruction.strip()):
            return name
    raise AssertionError(f"request carries no known prompt: {system[:80]!r}")


def inputs_of(messages: list[BaseMessage]) -> dict[str, Any]:
    """The JSON input of the request (the last 'Input:' block of the first human message)."""
    human = str(messages[1].content)
    block = human.rsplit("Input:\n", 1)[1].rsplit("\nOutput:", 1)[0]
    return json.loads(block)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text or "") if s.strip()]


def _entities(text: str) -> list[str]:
    return sorted(set(re.findall(r"\b[A-Z][a-z]+\b|\b\d{4}\b", text or "")))


def well_formed(messages: list[BaseMessage]) -> dict[str, Any]:
    """A valid reply for whatever judge prompt the request carries (everything judged good)."""
    name, data = prompt_name(messages), inputs_of(messages)
    n_ctx = len(data.get("contexts") or [])
    statements = data.get("statements") or []
    replies: dict[str, Callable[[], dict[str, Any]]] = {
        "answer_relevancy.questions": lambda: {
            "questions": [
                {"question": f"Question {i} about: {data['response'][:40]}?", "noncommittal": False}
                for i in range(int(data["n"]))
            ]
        },
        "intent_answer_relevancy.statements": lambda: {
            "intent": "get an answer",
            "statements": _sentences(data["response"]) or [data["response"]],
        },
        "intent_answer_relevancy.verdicts": lambda: {
            "verdicts": [{"verdict": "fully", "reason": "on topic"} for _ in statements],
            "reason": "every statement serves the intent",
        },
        "nv_context_relevance.judge1": lambda: {"rating": 2, "per_context": [2] * n_ctx},
        "nv_context_relevance.judge2": lambda: {"rating": 2, "per_context": [2] * n_ctx},
        "context_recall.attribution": lambda: {
            "classifications": [
                {"statement": s, "reason": "in context", "attributed": True}
                for s in _sentences(data["reference"]) or [data["reference"]]
            ]
        },
        "llm_context_precision_with_reference.verdicts": lambda: {
            "verdicts": [{"reason": "helps", "useful": True} for _ in range(n_ctx)]
        },
        "context_entity_recall.entities": lambda: {
            "entities": _entities(data["text"]) or ["Thing"]
        },
        "statements": lambda: {"statements": _sentences(data["answer"]) or [data["answer"]]},
        "faithfulness.verdicts": lambda: {
            "verdicts": [
                {"statement": s, "reason": "supported", "verdict": True} for s in statements
            ]
        },
        "nv_response_groundedness.judge1": lambda: {"rating": 2},
        "nv_response_groundedness.judge2": lambda: {"rating": 2},
        "nv_accuracy.judge1": lambda: {"rating": 4},
        "nv_accuracy.judge2": lambda: {"rating": 4},
        "answer_correctness.classify": lambda: {
            "TP": [{"statement": s, "reason": "matches"} for s in data["answer"]],
            "FP": [],
            "FN": [],
        },
        "rubrics_score": lambda: {"feedback": "clear and correct", "score": 4},
    }
    return replies[name]()


def by_prompt(table: dict[str, Any]) -> Callable[[list[BaseMessage]], Any]:
    """A script item answering by prompt name from ``table`` (a value or a callable of inputs)."""

    def reply(messages: list[BaseMessage]) -> Any:
        value = table[prompt_name(messages)]
        return value(inputs_of(messages)) if callable(value) else value

    return reply
