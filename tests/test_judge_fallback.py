"""A judge reply with the wrong number of grades gets one repair, then a recorded fallback."""

from __future__ import annotations

import re

from ragloop.nodes import prompts
from tests.test_graph_llm import (
    QUESTION,
    _inputs,
    _pipeline,
    assess_reply,
    context_ids,
    respond,
)


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
            return assess_reply(data, [2] * (len(context_ids(data)) - 1))
        return respond(body)

    openai_server.default.reply = one_grade_short
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assessed = _assess_requests(openai_server)
    per_judgment = [s for s in result.steps if s["node"] == "judge"]
    assert len(assessed) == 2 * len(per_judgment)  # the ask and its one repair, each time
    repair = assessed[1]["messages"][-1]["content"]
    missing = re.search(
        r"grades: expected each of the ids (.*) exactly once; missing (c\d+)", repair
    )
    assert missing and missing[2] == missing[1].split(", ")[-1], repair
    fallbacks = [s for s in result.steps if s["node"] == "judge-fallback"]
    assert len(fallbacks) == len(per_judgment)
    assert "unusable after one repair" in fallbacks[0]["detail"]
    assert "offline judge" in fallbacks[0]["detail"]
    assert "judge-fallback: " in "\n".join(result.path())


def test_a_repaired_reply_is_used_and_no_fallback_is_recorded(
    openai_server, fixture_index, wordllama
):
    seen: dict = {"assess": 0, "grades": {}}

    def short_then_right(body):
        if body["messages"][0]["content"].startswith(prompts.ASSESS.instruction.strip()):
            seen["assess"] += 1
            data = _inputs(body["messages"])
            grades = [2] + [0] * (len(context_ids(data)) - 1)
            if seen["assess"] == 1:
                grades = grades[:-1]
            else:
                seen["grades"] = dict(zip(context_ids(data), grades, strict=True))
            return assess_reply(data, grades)
        return respond(body)

    openai_server.default.reply = short_then_right
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert seen["assess"] == 2
    assert not [s for s in result.steps if s["node"] == "judge-fallback"]
    assert result.stop_reason == "sufficient"
    # the LLM's grades, not offline ones: the chunk it graded 2 first, then those it graded 0,
    # which the answer reads last to make up k
    grades = [c["grade"] for c in result.contexts]
    assert grades == sorted(seen["grades"].values(), reverse=True), (grades, seen["grades"])
    assert grades[0] == 2


def test_an_unusable_draft_or_rewrite_reply_is_recorded_in_the_path(
    openai_server, fixture_index, wordllama
):
    """Every LLM step that falls back says so: the draft, and the rewrite (done offline)."""
    from ragloop.config import Context

    def broken(body):
        system = body["messages"][0]["content"]
        if system.startswith(prompts.DRAFT.instruction.strip()):
            return "not json at all"
        if system.startswith(prompts.REWRITE.instruction.strip()):
            return "still not json"
        if system.startswith(prompts.ASSESS.instruction.strip()):  # nothing is ever enough
            data = _inputs(body["messages"])
            return assess_reply(data, [1] * len(context_ids(data)), supported=False)
        return respond(body)

    openai_server.default.reply = broken
    pipe = _pipeline(openai_server, fixture_index, wordllama)
    pipe.context = Context(max_iterations=2, correct_order=("rewrite",))
    result = pipe.run(QUESTION)
    drafts = [s for s in result.steps if s["node"] == "draft-fallback"]
    assert len(drafts) == 1 and "no draft, retrieving" in drafts[0]["detail"]
    rewrites = [a for a in result.actions if a["action"] == "rewrite"]
    assert rewrites and "rewritten offline instead" in rewrites[0]["reason"]
    assert rewrites[0]["query"] != QUESTION  # the offline rewrite still added words
    assert "draft-fallback: " in "\n".join(result.path())
