"""A simulated competent LLM built from gold labels, served as an OpenAI-compatible server.

It plays every graph step the way a good model would, knowing only what the gold labels
say: the draft is noncommittal unless the question is general knowledge; the judge grades a
context holding a gold passage 2 and any other 0 or 1; the answer is the gold passage's
first sentence with its [n], or "not found" when no context it reads holds one. ``noise``
is the share of decisions made wrong on purpose (a grade flipped, a wrong citation, a
missed answer), drawn from a seeded RNG. Metric prompts (answer relevancy) get well-formed
replies from the test fakes. Nothing here reads the question's answer into a retrieval.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fakes

from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402

from ragloop.nodes import prompts  # noqa: E402
from tests.metrics_llm_fakes import well_formed  # noqa: E402

NOT_FOUND = "I could not find this in the documents."
_WORD = re.compile(r"\w+")
_CONTEXT = re.compile(r'<context (?:n="(\d+)"|id="(c\d+)") origin="\w+">\n(.*?)\n</context>', re.S)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def holds(context: str, gold: list[str], at: float = 0.7) -> bool:
    """True when ``context`` holds one gold passage (most of its words, in any order)."""
    have = _words(context)
    return any(g and len(_words(g) & have) >= at * len(_words(g)) for g in gold)


def _inputs(human: str) -> dict[str, Any]:
    return json.loads(human.rsplit("Input:\n", 1)[1].rsplit("\nOutput:", 1)[0])


class SimulatedLLM:
    """The reply callable of the fake server: ``reply(request_json) -> content``."""

    def __init__(self, rows: list[dict[str, Any]], noise: float = 0.0, seed: int = 0):
        self.by_question = {r["user_input"].strip(): r for r in rows}
        self.noise = noise
        self.rng = random.Random(seed)
        self.calls: dict[str, int] = {}

    def _row(self, question: str) -> dict[str, Any] | None:
        return self.by_question.get(question.strip())

    def _wrong(self) -> bool:
        return self.rng.random() < self.noise

    def __call__(self, body: dict[str, Any]) -> Any:
        messages = body["messages"]
        system, human = messages[0]["content"], messages[1]["content"]
        for name, prompt in (
            ("draft", prompts.DRAFT),
            ("assess", prompts.ASSESS),
            ("rewrite", prompts.REWRITE),
        ):
            if system.startswith(prompt.instruction.strip()[:60]):
                self.calls[name] = self.calls.get(name, 0) + 1
                return getattr(self, name)(_inputs(human))
        if system.startswith(prompts.ANSWER_SYSTEM[:60]):
            self.calls["answer"] = self.calls.get("answer", 0) + 1
            return self.answer(human)
        self.calls["metric"] = self.calls.get("metric", 0) + 1
        return well_formed([SystemMessage(content=system), HumanMessage(content=human)])

    def draft(self, data: dict[str, Any]) -> dict[str, Any]:
        row = self._row(data["question"])
        if row is not None and row["kind"] == "general" and not self._wrong():
            return {"answer": row["reference"], "noncommittal": False, "needs_retrieval": False}
        return {"answer": "I am not sure.", "noncommittal": True, "needs_retrieval": True}

    def assess(self, data: dict[str, Any]) -> dict[str, Any]:
        row = self._row(data["question"]) or {}
        gold = row.get("reference_contexts") or []
        grades = []
        for _, cid, text in _CONTEXT.findall(data["new_contexts"]):
            good = holds(text, gold)
            if self._wrong():
                good = not good
            grades.append({"id": cid, "grade": 2 if good else self.rng.choice((0, 1))})
        found = any(g["grade"] == 2 for g in grades) or holds(data["kept_contexts"], gold)
        claims = [{"id": c["id"], "supported": found} for c in data["claims"]]
        return {"grades": grades, "claims": claims}

    def rewrite(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"query": data["question"]}

    def answer(self, human: str) -> str:
        question = human.rsplit("\n\nQuestion: ", 1)[-1]
        row = self._row(question) or {}
        gold = row.get("reference_contexts") or []
        contexts = [(int(n), text) for n, _, text in _CONTEXT.findall(human)]
        holding = [n for n, text in contexts if holds(text, gold)]
        if self._wrong():  # a wrong citation, or a miss
            others = [n for n, _ in contexts if n not in holding]
            holding = [self.rng.choice(others)] if others and self.rng.random() < 0.5 else []
        if not holding:
            return NOT_FOUND
        n = holding[0]
        source = (
            row.get("reference", "")
            if n in dict(contexts) and holds(dict(contexts)[n], gold)
            else dict(contexts).get(n, "")
        )
        return f"{first_sentence(source)} [{n}]"


def first_sentence(text: str) -> str:
    """The first sentence of ``text``."""
    return re.split(r"(?<=[.!?])\s", text.strip())[0]


def said_not_found(answer: str) -> bool:
    """True for an answer that says the documents do not hold it."""
    return "could not find" in answer.lower()
