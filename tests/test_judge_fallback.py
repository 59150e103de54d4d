"""A judge reply with the wrong number of grades gets one repair, then a recorded fallback."""

from __future__ import annotations

import re

from ragloop.nodes import prompts
from tests.test_graph_llm import QUESTION, _inputs, _pipeline, respond


def _assess_requests(server) -> list[dict]:
    return [
        r.body
        for r in server.chat_requests()
        if r.body["messages"][0]["content"].startswith(prompts.ASSESS.instruction.strip())
    ]


def test_wrong_grade_count_is_repaired_once_then_recorded_as_fallback(
    openai_server, fixture_index, wordllama
):
    def one_grade_short(body):
        if body["messages"][0]["content"].startswith(prompts.ASSESS.instruction.strip()):
            data = _inputs(body["messages"])
            n = data["new_contexts"].count("<context n=")
            return {"grades": [2] * (n - 1), "supported": [True] * len(data["claims"])}
        return respond(body)

    openai_server.default.reply = one_grade_short
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assessed = _assess_requests(openai_server)
    per_judgment = [s for s in result.steps if s["node"] == "judge"]
    assert len(assessed) == 2 * len(per_judgment)  # the ask and its one repair, each time
    repair = assessed[1]["messages"][-1]["content"]
    counts = re.search(r"(\d+) grades for (\d+) new contexts", repair)
    assert counts and int(counts[1]) == int(counts[2]) - 1, repair
    fallbacks = [s for s in result.steps if s["node"] == "judge-fallback"]
    assert len(fallbacks) == len(per_judgment)
    assert "unusable after one repair" in fallbacks[0]["detail"]
    assert "offline judge" in fallbacks[0]["detail"]
    assert "judge-fallback: " in "\n".join(result.path())


def test_a_repaired_reply_is_used_and_no_fallback_is_recorded(
    openai_server, fixture_index, wordllama
):
    seen = {"assess": 0}

    def short_then_right(body):
        if body["messages"][0]["content"].startswith(prompts.ASSESS.instruction.strip()):
            seen["assess"] += 1
            data = _inputs(body["messages"])
            n = data["new_contexts"].count("<context n=")
            grades = [2] + [0] * (n - 1)
            if seen["assess"] == 1:
                grades = grades[:-1]
            return {"grades": grades, "supported": [True] * len(data["claims"])}
        return respond(body)

    openai_server.default.reply = short_then_right
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert seen["assess"] == 2
    assert not [s for s in result.steps if s["node"] == "judge-fallback"]
    assert result.stop_reason == "sufficient"
    assert [c["grade"] for c in result.contexts] == [2]  # the LLM's grades, not offline ones
