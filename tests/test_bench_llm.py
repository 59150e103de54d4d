"""The simulated competent LLM of ``bench/llm_loop.py`` reads the graph's real prompts."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from _simulated_llm import SimulatedLLM, said_not_found  # noqa: E402
from langchain_core.messages import messages_to_dict  # noqa: E402

from ragloop._async import run_sync  # noqa: E402
from ragloop.nodes.llm import LLMStrategies  # noqa: E402
from ragloop.nodes.offline import OfflineStrategies  # noqa: E402
from tests.fakes.chat import ScriptedChatModel  # noqa: E402

GOLD = "The dock clears DK-04 when the brush bar is cleaned and the robot is restarted."
ROW = {
    "user_input": "How do I clear DK-04?",
    "reference": "Clean the brush bar and restart the robot. It then clears.",
    "reference_contexts": [GOLD],
    "kind": "kb",
}


def _body(messages) -> dict:
    return {"messages": [{"content": m["data"]["content"]} for m in messages_to_dict(messages)]}


def _requests(wordllama, call):
    """The requests the graph's LLM steps send, captured from a scripted model."""
    llm = ScriptedChatModel(script=[{"grades": [], "claims": []}, "x"])
    strategies = LLMStrategies(llm, wordllama, OfflineStrategies(wordllama, None))
    with contextlib.suppress(Exception):  # only the request matters here
        run_sync(call(strategies))
    return [_body(m) for m in llm.calls]


def test_the_gold_context_is_graded_2_and_the_others_low(wordllama):
    other = "Shipping takes five days."
    body = _requests(wordllama, lambda s: s.assess(ROW["user_input"], [other, GOLD], [], ["c"], 1))
    reply = SimulatedLLM([ROW])(body[0])
    grades = {g["id"]: g["grade"] for g in reply["grades"]}
    assert grades["c2"] == 2 and grades["c1"] < 2
    assert reply["claims"] == [{"id": "k1", "supported": True}]


def test_the_answer_cites_the_gold_context_or_says_not_found(wordllama):
    def asked(texts):
        contexts = [{"text": t, "origin": "kb"} for t in texts]
        return _requests(wordllama, lambda s: s.answer(ROW["user_input"], contexts))[0]

    sim = SimulatedLLM([ROW])
    assert sim(asked(["Shipping takes five days.", GOLD])) == (
        "Clean the brush bar and restart the robot. [2]"
    )
    assert said_not_found(sim(asked(["Shipping takes five days."])))
