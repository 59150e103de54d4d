"""The LLM path's answer step: what it reads after an LLM judge, and when it says "not found"."""

import json
import re

from langchain_core.messages import HumanMessage, SystemMessage

from ragloop.config import Context
from ragloop.nodes import prompts
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.base import Deps
from ragloop.nodes.llm import LLMStrategies, says_not_found
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline
from ragloop.retrievers.registry import get_retriever
from tests.fakes.fixtures import fake_chat_model
from tests.metrics_llm_fakes import well_formed

QUESTION = "How much does a replacement library card cost?"


def _model(grades, answer):
    """A fake model: noncommittal draft, ``grades`` for the judge by position, ``answer``."""

    def respond(body: dict):
        messages = body["messages"]
        system, human = messages[0]["content"], messages[-1]["content"]
        if system.startswith(prompts.DRAFT.instruction.strip()):
            return {"answer": "I am not sure.", "noncommittal": True, "needs_retrieval": True}
        if system.startswith(prompts.ASSESS.instruction.strip()):
            data = json.loads(human.rsplit("Input:\n", 1)[1].rsplit("\nOutput:", 1)[0])
            ids = re.findall(r'<context id="(c\d+)"', data["new_contexts"])
            return {
                "grades": [{"id": i, "grade": g} for i, g in zip(ids, grades, strict=False)],
                "claims": [{"id": c["id"], "supported": True} for c in data["claims"]],
            }
        if system.startswith(prompts.REWRITE.instruction.strip()):
            return {"query": "replacement card fee"}
        if system.startswith(prompts.ANSWER_SYSTEM):
            return answer
        return well_formed([SystemMessage(content=system), HumanMessage(content=human)])

    return respond


def _pipeline(server, index, wordllama, k=3):
    offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
    retrievers = {n: get_retriever(n, index, k=k) for n in ("dense", "sparse", "hybrid")}
    strategies = LLMStrategies(fake_chat_model(server), wordllama, offline)
    return Pipeline(Deps(strategies=strategies, retrievers=retrievers), Context(k=k))


def _answer_prompt(server) -> str:
    for request in server.chat_requests():
        messages = request.body["messages"]
        if messages[0]["content"].startswith(prompts.ANSWER_SYSTEM):
            return messages[-1]["content"]
    raise AssertionError("no answer request")


def test_chunks_an_llm_judge_graded_low_are_read_last_to_make_up_k(
    openai_server, fixture_index, wordllama
):
    # one chunk kept (grade 1): a false 0 on another must not hide it from the answer, which
    # reads k contexts as naive RAG would, the kept one first
    openai_server.default.reply = _model([0, 1, 0], "A replacement card costs a fee [1].")
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert result.stop_reason == "sufficient"
    read = re.findall(r'<context n="(\d+)"', _answer_prompt(openai_server))
    assert read == ["1", "2", "3"]
    answer_step = [s for s in result.steps if s["node"] == "answer"][0]
    assert "2 graded below the keep grade read last" in answer_step["detail"]
    assert result.citations[0]["n"] == 1


def test_nothing_is_read_when_the_llm_judge_kept_nothing(openai_server, fixture_index, wordllama):
    openai_server.default.reply = _model([0, 0, 0], "unused [1].")
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert result.not_found
    assert not any(
        r.body["messages"][0]["content"].startswith(prompts.ANSWER_SYSTEM)
        for r in openai_server.chat_requests()
    )


def test_an_llm_reply_saying_it_could_not_find_the_answer_is_not_found(
    openai_server, fixture_index, wordllama
):
    reply = "The provided contexts do not mention the cost of a replacement card."
    openai_server.default.reply = _model([2, 0, 0], reply)
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert result.answer == reply
    assert result.not_found and result.stop_reason == "not_found"
    assert not result.citations


def test_a_cited_llm_answer_is_found_whatever_it_adds(openai_server, fixture_index, wordllama):
    reply = "A replacement card costs a fee [1]. The contexts do not mention when to pay it."
    openai_server.default.reply = _model([2, 0, 0], reply)
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert not result.not_found and result.stop_reason == "sufficient"


def test_says_not_found_reads_the_opening_sentence():
    for text in (
        "I could not find the answer in the documents.",
        "I couldn't find it. The closest passage is [2].",
        "The contexts do not contain information about card fees.",
        "There is no information about this in the sources.",
        "I don't know.",
    ):
        assert says_not_found(text), text
    for text in (
        "Use pg_dump [1].",
        "VACUUM reclaims storage [1]. The documents do not mention FULL.",
        "The setting is not found in older versions [2].",
        "A replacement card costs five euros.",
    ):
        assert not says_not_found(text), text


def test_the_answer_step_says_it_read_the_best_k_of_more_kept(
    openai_server, fixture_index, wordllama
):
    # claims never supported: the loop retrieves again with other retrievers and keeps more
    # than k chunks; the answer reads the best k, and its step must say so, not "from all"
    def respond(body: dict):
        reply = _model([1, 1, 1], "A replacement card costs a fee [1].")(body)
        if isinstance(reply, dict) and "claims" in reply:
            reply["claims"] = [{**c, "supported": False} for c in reply["claims"]]
        return reply

    openai_server.default.reply = respond
    result = _pipeline(openai_server, fixture_index, wordllama, k=2).run(QUESTION)
    assert len(result.contexts) > 2
    read = re.findall(r'<context n="(\d+)"', _answer_prompt(openai_server))
    assert read == ["1", "2"]
    answer_step = [s for s in result.steps if s["node"] == "answer"][0]
    assert f"the best 2 of {len(result.contexts)} context(s)" in answer_step["detail"]
