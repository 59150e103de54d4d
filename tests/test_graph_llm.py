"""The LLM strategy end to end through ChatOpenAI against a local OpenAI-compatible fake."""

import json
import re

from langchain_core.messages import HumanMessage, SystemMessage

from ragloop.config import Context
from ragloop.nodes import prompts
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.base import Deps
from ragloop.nodes.llm import LLMStrategies
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline
from ragloop.retrievers.registry import get_retriever
from tests.fakes.fixtures import FAKE_KEY, fake_chat_model
from tests.fakes.judge import compact_reply
from tests.metrics_llm_fakes import well_formed

QUESTION = "How much does a replacement library card cost?"
COMPACT_ASSESS = prompts.prompts_for(None)["assess.compact"]


def _inputs(messages: list[dict]) -> dict:
    human = messages[1]["content"]
    return json.loads(human.rsplit("Input:\n", 1)[1].rsplit("\nOutput:", 1)[0])


def context_ids(data: dict) -> list[str]:
    """The ids of the new contexts the judge prompt shows."""
    return re.findall(r'<context id="(c\d+)"', data["new_contexts"])


def assess_reply(data: dict, grades: list[int], supported: bool = True) -> dict:
    """A judge reply keyed by context id and claim id."""
    return {
        "grades": [{"id": i, "grade": g} for i, g in zip(context_ids(data), grades, strict=False)],
        "claims": [{"id": c["id"], "supported": supported} for c in data["claims"]],
    }


def respond(body: dict):
    """Answer each graph prompt in the shape it asks for; metric prompts via the metric fakes."""
    messages = body["messages"]
    system = messages[0]["content"]
    if system.startswith(prompts.DRAFT.instruction.strip()):
        return {"answer": "I am not sure.", "noncommittal": True, "needs_retrieval": True}
    if system.startswith(prompts.ASSESS.instruction.strip()):
        data = _inputs(messages)
        n = len(context_ids(data))
        return assess_reply(data, [2] + [0] * (n - 1))
    if system.startswith(COMPACT_ASSESS.instruction.strip()):  # the local profile's judge
        return compact_reply(messages[-1]["content"], 2, True)
    if system.startswith(prompts.REWRITE.instruction.strip()):
        return {"query": "replacement card fee"}
    if system.startswith(prompts.ANSWER_SYSTEM):
        return "A replacement card costs a small fee [1]."
    lc = [SystemMessage(content=system), HumanMessage(content=messages[1]["content"])]
    return well_formed(lc)


def _pipeline(server, fixture_index, wordllama):
    llm = fake_chat_model(server)
    offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
    retrievers = {n: get_retriever(n, fixture_index, k=3) for n in ("dense", "sparse", "hybrid")}
    deps = Deps(strategies=LLMStrategies(llm, wordllama, offline), retrievers=retrievers)
    return Pipeline(deps, Context(max_iterations=2))


def test_llm_happy_path_spends_at_most_four_calls_before_scoring(
    openai_server, fixture_index, wordllama
):  # noqa: F811
    openai_server.default.reply = respond
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    assert result.stop_reason == "sufficient" and result.iterations == 0
    assert result.answer == "A replacement card costs a small fee [1]."
    assert result.citations and result.citations[0]["n"] == 1
    assert result.llm_calls == openai_server.count()
    score_calls = 1  # answer_relevancy generates its questions in one call
    assert result.llm_calls - score_calls <= 4
    assert result.llm_calls == 4  # draft, judge, answer, then scoring
    assert -1.0 <= result.scores["answer_relevancy"] <= 1.0
    headers = [r.headers for r in openai_server.chat_requests()]
    assert all(
        h.get("authorization") == f"Bearer {FAKE_KEY}" or h.get("Authorization") for h in headers
    )
    assert FAKE_KEY not in json.dumps(result.to_dict())


def test_sync_runs_reuse_the_same_chatopenai_client(openai_server, fixture_index, wordllama):
    # a loop per call would leave ChatOpenAI's pool bound to a closed loop on the second run
    openai_server.default.reply = respond
    pipe = _pipeline(openai_server, fixture_index, wordllama)
    first, second = pipe.run(QUESTION), pipe.run(QUESTION)
    assert first.answer == second.answer and second.llm_calls == 4


def test_unreadable_judge_falls_back_to_offline_grades(openai_server, fixture_index, wordllama):
    def broken(body):
        system = body["messages"][0]["content"]
        if system.startswith(prompts.ASSESS.instruction.strip()):
            return "not json at all"
        return respond(body)

    openai_server.default.reply = broken
    result = _pipeline(openai_server, fixture_index, wordllama).run(QUESTION)
    judge_steps = [s for s in result.steps if s["node"] == "judge"]
    assert judge_steps and result.answer


def test_the_answer_streams_through_the_retrying_client_and_keeps_its_id(
    openai_server, fixture_index, wordllama
):
    """stream_mode="messages" over HTTP: the answer in several chunks, in order, after one
    retried fault; the thread's answer message has the chunks' id (a chat UI merges them);
    the JSON steps are asked whole and stay out of the stream."""
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    from ragloop.graph.builder import build_graph
    from ragloop.llm.faults import with_llm_retries

    faults = []

    def flaky(body: dict):
        if body.get("stream") and not faults:  # the answer's first attempt: HTTP 500
            faults.append(body)
            raise RuntimeError("overloaded")
        return respond(body)

    openai_server.default.reply = flaky
    llm = with_llm_retries(fake_chat_model(openai_server), 2, base_delay=0.01)
    offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
    retrievers = {n: get_retriever(n, fixture_index, k=3) for n in ("dense", "sparse", "hybrid")}
    deps = Deps(strategies=LLMStrategies(llm, wordllama, offline), retrievers=retrievers)
    graph = build_graph(deps, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}

    async def go():
        return [
            part
            async for part in graph.astream(
                {"messages": [{"role": "user", "content": QUESTION}]},
                cfg,
                context=Context(max_iterations=2),
                stream_mode="messages",
            )
        ]

    parts = asyncio.run(go())
    final = graph.get_state(cfg).values
    answer = final["answer"]
    assert answer == "A replacement card costs a small fee [1]."
    chunks = [m for m, meta in parts if meta["langgraph_node"] == "answer" and m.content]
    assert len(chunks) > 3 and "".join(c.content for c in chunks) == answer
    assert {m.id for m, _ in parts} == {final["messages"][-1].id}  # one message, no duplicate
    assert final["messages"][-1].content == answer
    streamed = [r for r in openai_server.chat_requests() if r.body.get("stream")]
    assert len(faults) == 1 and len(streamed) == 2  # the answer, retried once
    assert openai_server.count() > len(streamed)  # the draft and judge were asked whole
