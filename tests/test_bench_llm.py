"""The LLM-mode bench: its simulated competent model reads the graph's real prompts, and the
bench runs loop and naive RAG through ragloop's LLM client over a corpus (here the fixture one).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from _simulated_llm import Gold, SimulatedLLM, quote, said_not_found, unanswerable  # noqa: E402
from langchain_core.messages import messages_to_dict  # noqa: E402
from llm_loop import Case, Corpus, report, run_corpus  # noqa: E402

from ragloop._async import run_sync  # noqa: E402
from ragloop.config import Context  # noqa: E402
from ragloop.nodes.answer_cache import AnswerCache  # noqa: E402
from ragloop.nodes.base import Deps  # noqa: E402
from ragloop.nodes.llm import LLMStrategies  # noqa: E402
from ragloop.nodes.offline import OfflineStrategies  # noqa: E402
from ragloop.pipeline import Pipeline  # noqa: E402
from ragloop.retrievers.registry import get_retriever  # noqa: E402
from tests.fakes.chat import ScriptedChatModel  # noqa: E402

GOLD = "The dock clears DK-04 when the brush bar is cleaned and the robot is restarted."
QUESTION = "How do I clear DK-04?"
SAYS = "Clean the brush bar and restart the robot."


def _gold(question: str = QUESTION, snippet: str = GOLD, says: str | None = None) -> Gold:
    def has(text: str) -> bool:
        return snippet.lower() in " ".join(text.split()).lower()

    return Gold(question, has, (lambda _: says) if says else (lambda t: quote(t, has)))


def _body(messages) -> dict:
    return {"messages": [{"content": m["data"]["content"]} for m in messages_to_dict(messages)]}


def _requests(wordllama, call):
    """The requests the graph's LLM steps send, captured from a scripted model."""
    llm = ScriptedChatModel(script=[{"grades": [], "claims": []}, "x"])
    strategies = LLMStrategies(llm, wordllama, OfflineStrategies(wordllama, None))
    with contextlib.suppress(Exception):  # only the request matters here
        run_sync(call(strategies))
    return [_body(m) for m in llm.calls]


def _asked(wordllama, texts, question=QUESTION):
    contexts = [{"text": t, "origin": "kb"} for t in texts]
    return _requests(wordllama, lambda s: s.answer(question, contexts))[0]


def test_the_gold_context_is_graded_2_and_the_others_low(wordllama):
    other = "Shipping takes five days."
    body = _requests(wordllama, lambda s: s.assess(QUESTION, [other, GOLD], [], ["c"], 1))
    reply = SimulatedLLM([_gold()])(body[0])
    grades = {g["id"]: g["grade"] for g in reply["grades"]}
    assert grades["c2"] == 2 and grades["c1"] < 2
    assert reply["claims"] == [{"id": "k1", "supported": True}]


def test_the_answer_quotes_the_gold_sentence_with_its_number_or_says_not_found(wordllama):
    sim = SimulatedLLM([_gold()])
    page = f"The dock has a light. {GOLD} Then it beeps."
    assert sim(_asked(wordllama, ["Shipping takes five days.", page])) == f"{GOLD} [2]"
    assert said_not_found(sim(_asked(wordllama, ["Shipping takes five days."])))
    told = SimulatedLLM([_gold(says=SAYS)])
    assert told(_asked(wordllama, ["Shipping takes five days.", GOLD])) == f"{SAYS} [2]"
    # an unanswerable question (or one the model was never told of) is not found
    other = SimulatedLLM([unanswerable("Who won?")])
    assert said_not_found(other(_asked(wordllama, [GOLD], question="Who won?")))


def test_noise_is_seeded_by_the_request_and_nested_across_levels(wordllama):
    texts = [f"Passage {i} about something else entirely." for i in range(12)] + [GOLD]
    body = _requests(wordllama, lambda s: s.assess(QUESTION, texts, [], ["c"], 1))[0]
    clean = SimulatedLLM([_gold()], noise=0.0)(body)["grades"]
    low, high = (SimulatedLLM([_gold()], noise=n)(body)["grades"] for n in (0.3, 0.9))
    assert SimulatedLLM([_gold()], noise=0.3)(body)["grades"] == low  # same request, same reply
    flipped = [
        {a["id"] for a, b in zip(clean, g, strict=True) if (a["grade"] == 2) != (b["grade"] == 2)}
        for g in (low, high)
    ]
    assert flipped[0] <= flipped[1] and len(flipped[1]) > len(flipped[0])


@pytest.fixture
def tiny_corpus(fixture_index, wordllama) -> Corpus:
    """Three questions over the fixture corpus: two answered by a page, one by none."""
    replace = "A lost or damaged card is replaced for EUR 3."
    blocked = "borrowing is blocked until the balance is paid"
    cases = []
    for question, snippet in (
        ("How much does a replacement library card cost?", replace),
        ("When is borrowing blocked because of unpaid late fees?", blocked),
    ):
        gold = _gold(question, snippet)
        cases.append(
            Case(
                "named",
                gold,
                lambda c, g=gold: g.holds(c.get("text", "")),
                lambda a, s=snippet: s.lower() in a.lower(),
            )
        )
    cases.append(
        Case("unanswerable", unanswerable("Who painted the ceiling?"), None, lambda _: False)
    )
    offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
    retrievers = {n: get_retriever(n, fixture_index, k=3) for n in ("dense", "sparse", "hybrid")}

    def pipeline(llm) -> Pipeline:
        deps = Deps(strategies=LLMStrategies(llm, wordllama, offline), retrievers=retrievers)
        return Pipeline(deps, Context(k=3))

    return Corpus("tiny", cases, pipeline)


def test_the_bench_runs_loop_and_naive_through_the_llm_client(tiny_corpus, capsys):
    gc.collect()  # what earlier tests left unclosed warns now, not inside the block below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        rows = asyncio.run(run_corpus(tiny_corpus, [0.0, 0.3], latency=0.0))
        gc.collect()
    # the LLM client's pooled connection is closed with the bench's event loop, not left open
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks
    assert [(r["noise"], r["kind"]) for r in rows] == [
        (n, k) for n in (0.0, 0.3) for k in ("named", "named", "unanswerable")
    ]
    clean = [r for r in rows if r["noise"] == 0.0]
    for r in clean[:2]:  # the competent model finds, keeps, cites and states the passage
        assert r["loop_kept"] and r["loop_cited"] and r["loop_hit"] and not r["loop_nf"]
        assert r["naive_calls"] == 1
    assert clean[2]["loop_nf"] and clean[2]["naive_nf"] and clean[2]["loop_kept"] is None
    happy = [r["loop_calls"] for r in rows if r["loop_happy"]]
    assert happy and max(happy) <= 4  # draft, judge, answer, and the answer's scoring
    assert all(r["loop_calls"] > 4 for r in rows if not r["loop_happy"])
    report(rows, 0.0)
    out = capsys.readouterr().out
    assert "noise 0.3" in out and "answer hit: loop - naive" in out
    assert "pooled  answer hit loop - naive" in out and "happy path: at most" in out
