"""The fixture's neutral verdicts as replies in ragloop's judge schemas, routed by prompt."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from ragloop.eval.metrics._llm import join_contexts
from tests.metrics_llm_fakes import inputs_of, prompt_name


def _statements(items: list[str]) -> dict[str, Any]:
    return {"statements": items}


def replier(case: dict[str, Any]) -> Any:
    """A ScriptedChatModel script item answering every request of one case."""
    v, sample = case["verdicts"], case["sample"]

    def reply(messages: list[BaseMessage]) -> Any:
        name, data = prompt_name(messages), inputs_of(messages)
        metric = case["metric"]
        if name == "statements" and metric == "faithfulness":
            return _statements(v["statements"])
        if name == "faithfulness.verdicts":
            pairs = zip(v["statements"], v["verdicts"], strict=False)
            return {
                "verdicts": [{"statement": s, "reason": "r", "verdict": bool(b)} for s, b in pairs]
            }
        if name == "context_recall.attribution":
            return {
                "classifications": [
                    {"statement": f"S{k}.", "reason": "r", "attributed": bool(b)}
                    for k, b in enumerate(v["attributed"])
                ]
            }
        if name == "llm_context_precision_with_reference.verdicts":
            return {"verdicts": [{"reason": "r", "useful": bool(b)} for b in v["useful"]]}
        if name == "statements":  # answer_correctness: routed by the text it splits
            side = "response" if data["answer"] == sample["response"] else "reference"
            return _statements(v[f"{side}_statements"])
        if name == "answer_correctness.classify":
            return {k: [{"statement": s, "reason": "r"} for s in v[k]] for k in ("TP", "FP", "FN")}
        if name == "context_entity_recall.entities":
            ref = data["text"] == sample["reference"]
            ref = ref and data["text"] != join_contexts(sample["retrieved_contexts"])
            return {"entities": v["reference_entities" if ref else "context_entities"]}
        if name == "answer_relevancy.questions":
            return {
                "questions": [{"question": q, "noncommittal": bool(nc)} for q, nc in v["questions"]]
            }
        if name.endswith(".judge1") or name.endswith(".judge2"):
            rating = v["ratings"][0 if name.endswith("1") else 1]
            return "no rating given" if rating is None else {"rating": rating}
        if name == "rubrics_score":
            return {"feedback": "f", "score": v["score"]}
        if name == "topic_adherence.topics":
            return {"topics": v["topics"]}
        if name == "topic_adherence.refused":
            return {"refused": v["refused"]}
        if name == "topic_adherence.classify":
            return {"classifications": v["classifications"]}
        if name == "agent_goal_accuracy.workflow":
            return {"user_goal": v["user_goal"], "end_state": v["end_state"]}
        if name == "agent_goal_accuracy.compare":
            return {"reason": "r", "verdict": v["verdict"]}
        raise AssertionError(f"no reply for prompt {name}")

    return reply
