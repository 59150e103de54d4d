"""LLM-metric cases for scripts/ragas_conformance.py: samples, neutral verdicts, RAGAS replies.

Each case holds a sample, the judge's decisions in a neutral form (``verdicts``) and a
builder of the RAGAS 0.4.3 legacy metric. ``ragas_replies`` turns the verdicts into the
JSON (or bare text for the NVIDIA metrics) RAGAS's prompts expect, in the order RAGAS
asks; ragloop's test turns the same verdicts into ragloop's schema.
"""

from __future__ import annotations

import importlib
import json
import random
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

_POOL = (
    "Paris France capital river Seine tower Eiffel 1889 Marie Curie Nobel prize "
    "1903 Warsaw physics chemistry Lisbon Tagus Tokyo Japan 1868 서울 Москва café"
)
WORDS = _POOL.split()


class CountingFake(FakeListChatModel):
    """FakeListChatModel that counts the requests it answered."""

    calls: int = 0

    def _call(self, *args: Any, **kwargs: Any) -> str:
        self.calls += 1
        return super()._call(*args, **kwargs)


def _m(module: str, cls: str) -> Any:
    return getattr(importlib.import_module(f"ragas.metrics.{module}"), cls)


def _builder(module: str, cls: str, **fixed: Any) -> Any:
    """A function (llm, embeddings) -> the RAGAS legacy metric ``cls`` with ``fixed`` params."""

    def build(llm: Any, emb: Any) -> Any:
        return _m(module, cls)(llm=llm, **fixed)

    return build


def _text(rng: random.Random, lo: int = 1, hi: int = 3) -> str:
    n = rng.randint(lo, hi)
    return ". ".join(" ".join(rng.choices(WORDS, k=rng.randint(2, 6))) for _ in range(n)) + "."


def _blank(rng: random.Random) -> str:
    return rng.choice(["", " ", "\n"])


def _bits(rng: random.Random, n: int) -> list[int]:
    return [rng.randint(0, 1) for _ in range(n)]


def _single(rng: random.Random) -> dict[str, Any]:
    refs = [_text(rng) for _ in range(rng.randint(0, 3))]
    return {
        "user_input": _text(rng, 1, 1)[:-1] + "?",
        "response": _text(rng),
        "reference": _text(rng),
        "retrieved_contexts": [_text(rng) for _ in range(rng.randint(0, 4))],
        "reference_contexts": refs,
    }


def _conversation(rng: random.Random) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        messages.append({"type": "human", "content": _text(rng, 1, 1)[:-1] + "?"})
        if rng.random() < 0.5:
            call = {"name": "retrieve", "args": {"query": _text(rng, 1, 1)}}
            messages.append({"type": "ai", "content": "", "tool_calls": [call]})
            messages.append({"type": "tool", "content": _text(rng)})
        messages.append({"type": "ai", "content": _text(rng)})
    return {
        "user_input": messages,
        "reference": _text(rng, 1, 1),
        "reference_topics": rng.sample(["science", "geography", "history", "art"], 2),
    }


def _entities(rng: random.Random) -> list[str]:
    pool = ["Paris", "paris", "Eiffel Tower", "1889", "Marie Curie", "Warsaw", "Tokyo", "서울"]
    return [rng.choice(pool) for _ in range(rng.randint(0, 5))]


NO_RATING = "no rating given"
N = 30  # random cases per metric, on top of the hand-written edge cases


def llm_cases(rng: random.Random) -> list[dict[str, Any]]:
    """Every LLM-metric case: random ones plus the edge cases RAGAS treats specially."""
    cases: list[dict[str, Any]] = []

    def add(metric: str, sample: dict, verdicts: dict, build: Any, **extra: Any) -> None:
        cases.append(
            {"metric": metric, "sample": sample, "verdicts": verdicts, "build": build, **extra}
        )

    faith = _builder("_faithfulness", "Faithfulness")
    for i in range(N + 3):
        s = _single(rng)
        n = 0 if i == 0 else rng.randint(1, 5)
        verdicts = _bits(rng, n if i % 5 else max(0, n - rng.randint(1, 2)))
        if i == 1:
            verdicts = []
        add(
            "faithfulness",
            s,
            {"statements": [f"S{k}." for k in range(n)], "verdicts": verdicts},
            faith,
        )

    recall = _builder("_context_recall", "LLMContextRecall")
    for i in range(N + 1):
        add(
            "context_recall",
            _single(rng),
            {"attributed": _bits(rng, 0 if i == 0 else rng.randint(1, 5))},
            recall,
        )

    prec = _builder("_context_precision", "LLMContextPrecisionWithReference")
    for i in range(N + 1):
        s = _single(rng)
        if i == 0:
            s["retrieved_contexts"] = []
        add(
            "llm_context_precision_with_reference",
            s,
            {"useful": _bits(rng, len(s["retrieved_contexts"]))},
            prec,
        )

    def correctness(weights: list[float] | None) -> Any:
        def build(llm: Any, emb: Any) -> Any:
            kw = {"weights": weights} if weights else {}
            return _m("_answer_correctness", "AnswerCorrectness")(llm=llm, embeddings=emb, **kw)

        return build

    for i in range(N + 6):
        s = _single(rng)
        if i == 0:
            s["response"] = ""
        if i == 1:
            s["response"] = s["reference"] = ""
        nr, nf = (0, 0) if i in (2, 3) else (rng.randint(0, 4), rng.randint(0, 4))
        if i == 3:
            nf = 2
        resp = [f"R{k}." for k in range(nr)]
        ref = [f"G{k}." for k in range(nf)] if s["response"] != s["reference"] else list(resp)
        tp = resp[: rng.randint(0, nr)]
        verdicts = {
            "response_statements": resp,
            "reference_statements": ref,
            "TP": tp,
            "FP": resp[len(tp) :],
            "FN": ref[rng.randint(0, nf) :],
        }
        weights = [1.0, 0.0] if i % 7 == 4 else ([0.4, 0.6] if i % 7 == 5 else None)
        params = {"weights": weights} if weights else {}
        add("answer_correctness", s, verdicts, correctness(weights), params=params)

    ent = _builder("_context_entities_recall", "ContextEntityRecall")
    for i in range(N + 2):
        v = {"reference_entities": _entities(rng), "context_entities": _entities(rng)}
        if i == 0:
            v = {
                "reference_entities": ["Paris", "Paris", "1889"],
                "context_entities": ["paris", "1889"],
            }
        add("context_entity_recall", _single(rng), v, ent)

    def relevancy(n: int) -> Any:
        return lambda llm, emb: _m("_answer_relevance", "ResponseRelevancy")(
            llm=llm, embeddings=emb, strictness=n
        )

    for i in range(N + 2):
        s = _single(rng)
        if i == 0:
            s["user_input"] = ""
        n = rng.randint(1, 4)
        qs = [[_text(rng, 1, 1)[:-1] + "?", int(rng.random() < 0.3)] for _ in range(n)]
        if i == 1:
            qs = [[q, 1] for q, _ in qs]
        add("answer_relevancy", s, {"questions": qs}, relevancy(n), params={"strictness": n})

    nv = {
        "nv_accuracy": ("AnswerAccuracy", [0, 2, 4]),
        "nv_context_relevance": ("ContextRelevance", [0, 1, 2]),
        "nv_response_groundedness": ("ResponseGroundedness", [0, 1, 2]),
    }
    for name, (cls, levels) in nv.items():
        build = (lambda c: lambda llm, emb: _m("_nv_metrics", c)(llm=llm))(cls)
        for i in range(N + 4):
            s = _single(rng)
            if i == 0:
                s["retrieved_contexts"] = [_blank(rng)]
            if i == 1:
                s["user_input"] = s["response"] = _blank(rng)
            if i == 2 and s["retrieved_contexts"]:
                s["user_input"] = s["response"] = s["retrieved_contexts"][0]
            if i == 3 and s["retrieved_contexts"]:
                s["user_input"] = s["response"] = s["retrieved_contexts"][0][:5]
            add(name, s, {"ratings": [rng.choice(levels), rng.choice(levels)]}, build)
        for failed in (0, 0, 1, 1):  # one judge never gives a rating (null)
            ratings: list[int | None] = [rng.choice(levels), rng.choice(levels)]
            ratings[failed] = None
            add(name, _single(rng), {"ratings": ratings}, build)

    rub = _builder("_domain_specific_rubrics", "RubricsScore")
    for _ in range(10):
        add("domain_specific_rubrics", _single(rng), {"score": rng.randint(1, 5)}, rub)
    for _ in range(10):
        c = _conversation(rng)
        add("domain_specific_rubrics", c, {"score": rng.randint(1, 5)}, rub, multi_turn=True)

    def topic(mode: str) -> Any:
        return lambda llm, emb: _m("_topic_adherence", "TopicAdherenceScore")(llm=llm, mode=mode)

    for mode in ("precision", "recall", "f1"):
        for i in range(N // 2 + 1):
            n = 0 if i == 0 else rng.randint(1, 4)
            m = n if i % 4 else max(0, n + rng.choice([-1, 1]))
            v = {
                "topics": [f"topic {k}" for k in range(n)],
                "refused": [rng.random() < 0.3 for _ in range(n)],
                "classifications": [rng.random() < 0.6 for _ in range(m)],
            }
            add(
                "topic_adherence",
                _conversation(rng),
                v,
                topic(mode),
                multi_turn=True,
                params={"mode": mode},
            )

    goal_with = _builder("_goal_accuracy", "AgentGoalAccuracyWithReference")
    goal_without = _builder("_goal_accuracy", "AgentGoalAccuracyWithoutReference")
    for i in range(N // 2 * 2):
        c = _conversation(rng)
        with_ref = i % 2 == 0
        if not with_ref:
            c.pop("reference")
        v = {"user_goal": "book a table", "end_state": "table booked", "verdict": rng.randint(0, 1)}
        add("agent_goal_accuracy", c, v, goal_with if with_ref else goal_without, multi_turn=True)
    return cases


def _j(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def ragas_replies(case: dict[str, Any]) -> list[str]:
    """The fake model's replies in RAGAS's schemas, in the order RAGAS asks."""
    v, name = case["verdicts"], case["metric"]
    if name == "faithfulness":
        out = [_j({"statements": v["statements"]})]
        if v["statements"]:
            items = [
                {"statement": s, "reason": "r", "verdict": b}
                for s, b in zip(v["statements"], v["verdicts"], strict=False)
            ]
            out.append(_j({"statements": items}))
        return out
    if name == "context_recall":
        items = [
            {"statement": f"S{k}.", "reason": "r", "attributed": b}
            for k, b in enumerate(v["attributed"])
        ]
        return [_j({"classifications": items})]
    if name == "llm_context_precision_with_reference":
        return [_j({"reason": "r", "verdict": b}) for b in v["useful"]]
    if name == "answer_correctness":
        out = [
            _j({"statements": v["response_statements"]}),
            _j({"statements": v["reference_statements"]}),
        ]
        if v["response_statements"] or v["reference_statements"]:
            out.append(
                _j({k: [{"statement": s, "reason": "r"} for s in v[k]] for k in ("TP", "FP", "FN")})
            )
        return out
    if name == "context_entity_recall":
        return [_j({"entities": v["reference_entities"]}), _j({"entities": v["context_entities"]})]
    if name == "answer_relevancy":
        return [_j({"question": q, "noncommittal": nc}) for q, nc in v["questions"]]
    if name.startswith("nv_"):  # a judge that fails answers without a digit, 5 tries
        return [item for r in v["ratings"] for item in ([NO_RATING] * 5 if r is None else [str(r)])]
    if name == "domain_specific_rubrics":
        return [_j({"feedback": "f", "score": v["score"]})]
    if name == "topic_adherence":
        out = [_j({"topics": v["topics"]})]
        out += [_j({"refused_to_answer": r}) for r in v["refused"]]
        return out + [_j({"classifications": v["classifications"]})]
    if name == "agent_goal_accuracy":
        return [
            _j({"user_goal": v["user_goal"], "end_state": v["end_state"]}),
            _j({"reason": "r", "verdict": str(v["verdict"])}),
        ]
    raise ValueError(f"no reply script for {name}")
