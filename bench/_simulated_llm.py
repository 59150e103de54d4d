"""A simulated competent LLM built from gold labels, served as an OpenAI-compatible server.

It plays every graph step the way a good model would, knowing only what a real model sees
(the prompt's text) plus the gold label of the question it is asked about (``Gold``): the
draft is noncommittal unless the question is general knowledge; the judge grades a context
holding the gold passage 2 and any other 0 or 1, and calls the question's claims supported
once a graded or kept context holds it; the rewrite returns the question as asked (no gold
words leak into retrieval); the answer quotes the gold passage's sentence from the first
context holding it, with its [n], or says it could not find the answer when no context it
reads holds it (always, for an unanswerable question). Metric prompts (answer relevancy)
get well-formed replies from the test fakes.

``noise`` is the share of decisions made wrong on purpose: a grade flipped, or an answer
that cites a context without the gold (or says "not found" although one holds it). Each
decision draws from an RNG seeded by what it is about (a grade: the question and the
chunk; an answer: the question and the passage holding the gold, if one is read), never
by the order of requests: the loop and naive RAG meet the same model, errors at 10% are
among those at 30%, and a rerun gives the same figures.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fakes

from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402

from ragloop.nodes import prompts  # noqa: E402
from ragloop.text import split_sentences  # noqa: E402
from tests.metrics_llm_fakes import well_formed  # noqa: E402

NOT_FOUND = "I could not find the answer to this in the documents."
_WORD = re.compile(r"\w+")
#: the local profile's judge prompt (compact: plain-text inputs, a reply keyed by id)
COMPACT_ASSESS = prompts.prompts_for(None)["assess.compact"]
_CONTEXT = re.compile(r'<context (?:n="(\d+)"|id="(c\d+)") origin="\w+">\n(.*?)\n</context>', re.S)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def holds(context: str, gold: list[str], at: float = 0.7) -> bool:
    """True when ``context`` holds one gold passage (most of its words, in any order)."""
    have = _words(context)
    return any(g and len(_words(g) & have) >= at * len(_words(g)) for g in gold)


def first_sentence(text: str) -> str:
    """The first sentence of ``text``."""
    return re.split(r"(?<=[.!?])\s", text.strip())[0]


def quote(text: str, holding: Callable[[str], bool], widest: int = 3) -> str:
    """The shortest run of ``text``'s sentences (up to ``widest``) that holds the gold, else
    the whole text: what a careful model quotes from the context that answers."""
    sentences = split_sentences(text)
    for width in range(1, widest + 1):
        for i in range(len(sentences) - width + 1):
            run = " ".join(sentences[i : i + width])
            if holding(run):
                return run
    return text.strip()


def said_not_found(answer: str) -> bool:
    """True for an answer that says the documents do not hold it."""
    return "could not find" in answer.lower()


@dataclass(frozen=True)
class Gold:
    """What the simulated model knows of one question (never sent to the loop).

    ``holds(text)``: a context's text holds the gold passage; ``says(text)``: what the model
    answers from a context that holds it; ``closed_book``: a general-knowledge answer the
    model gives without documents ("" when it would not know).
    """

    question: str
    holds: Callable[[str], bool]
    says: Callable[[str], str]
    closed_book: str = ""


def unanswerable(question: str) -> Gold:
    """A question no document answers."""
    return Gold(question, lambda _: False, lambda text: text)


def _inputs(human: str) -> dict[str, Any]:
    return json.loads(human.rsplit("Input:\n", 1)[1].rsplit("\nOutput:", 1)[0])


class SimulatedLLM:
    """The reply callable of the fake server: ``reply(request_json) -> content``.

    ``noise`` may be changed between passes; ``calls`` counts requests by step.
    """

    def __init__(self, golds: list[Gold], noise: float = 0.0, seed: int = 0):
        self.by_question = {g.question.strip(): g for g in golds}
        self.noise = noise
        self.seed = seed
        self.calls: dict[str, int] = {}

    def _gold(self, question: str) -> Gold:
        return self.by_question.get(question.strip()) or unanswerable(question)

    def _rng(self, *key: str) -> random.Random:
        """An RNG for one decision, seeded by what the decision is about."""
        text = "\x1f".join((str(self.seed), *key))  # not the noise: its errors are nested
        return random.Random(hashlib.sha256(text.encode("utf-8")).digest())

    def __call__(self, body: dict[str, Any]) -> Any:
        messages = body["messages"]
        system, human = messages[0]["content"], messages[-1]["content"]
        if system.startswith(COMPACT_ASSESS.instruction.strip()[:60]):
            self.calls["assess"] = self.calls.get("assess", 0) + 1
            return self.assess_compact(human)
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
        gold = self._gold(data["question"])
        wrong = self._rng("draft", data["question"]).random() < self.noise
        if gold.closed_book and not wrong:
            return {"answer": gold.closed_book, "noncommittal": False, "needs_retrieval": False}
        return {"answer": "I am not sure.", "noncommittal": True, "needs_retrieval": True}

    def assess(self, data: dict[str, Any]) -> dict[str, Any]:
        question = data["question"]
        gold = self._gold(question)
        grades = []
        for _, cid, text in _CONTEXT.findall(data["new_contexts"]):
            rng = self._rng("grade", question, text)  # one chunk, one grade, every round
            good = gold.holds(text)
            if rng.random() < self.noise:
                good = not good
            grades.append({"id": cid, "grade": 2 if good else rng.choice((0, 1))})
        kept = [text for _, _, text in _CONTEXT.findall(data["kept_contexts"])]
        found = any(g["grade"] == 2 for g in grades) or any(gold.holds(t) for t in kept)
        claims = [{"id": c["id"], "supported": found} for c in data["claims"]]
        return {"grades": grades, "claims": claims}

    def assess_compact(self, human: str) -> dict[str, Any]:
        """The local profile's judge: plain text in (contexts trimmed, kept ones first), one
        key per id out. It grades what it is shown, so a gold passage past the trimmed
        opening goes unseen, as it would for a real model."""
        question = human.split("question:\n", 1)[1].split("\n\n", 1)[0]
        gold = self._gold(question)
        reply: dict[str, Any] = {}
        for _, cid, text in _CONTEXT.findall(human):
            rng = self._rng("grade", question, text)
            good = gold.holds(text)
            if rng.random() < self.noise:
                good = not good
            reply[cid] = 2 if good else rng.choice((0, 1))
        found = any(grade == 2 for grade in reply.values())
        reply.update(dict.fromkeys(re.findall(r"^(k\d+): ", human, re.MULTILINE), found))
        return reply

    def rewrite(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"query": data["question"]}

    def answer(self, human: str) -> str:
        question = human.rsplit("\n\nQuestion: ", 1)[-1]
        gold = self._gold(question)
        contexts = {int(n): text for n, _, text in _CONTEXT.findall(human)}
        holding = [n for n, text in contexts.items() if gold.holds(text)]
        # the model errs on a question and the passage that answers it, not on the order or
        # company in which it reads that passage: two systems that show it the gold passage
        # meet the same error (a paired comparison)
        rng = self._rng("answer", question, contexts[holding[0]] if holding else "")
        if rng.random() < self.noise:  # a wrong citation, or a miss
            others = sorted((n for n in contexts if n not in holding), key=contexts.get)
            if others and rng.random() < 0.5:
                n = rng.choice(others)
                return f"{first_sentence(contexts[n])} [{n}]"
            return NOT_FOUND
        if not holding:
            return NOT_FOUND
        n = holding[0]
        return f"{gold.says(contexts[n])} [{n}]"
