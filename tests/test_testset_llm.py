"""LLM test-set generation over real HTTP against the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import json

from ragloop.testset import generate
from tests.conftest import CORPUS
from tests.fakes.fixtures import fake_chat_model
from tests.fakes.openai_server import messages_text, reply

ONLY_SPECIFIC = {"single_hop_specific_query_synthesizer": 1.0}


def _router(write, supported=True):
    """Replies by prompt: the question writer, the statement splitter, the verdicts."""
    state = {"n": 0}

    def answer(body):
        text = messages_text(body)
        if "Break the answer" in text:
            return {"statements": ["The passage states it."]}
        if "can be inferred from the contexts" in text:
            return {"verdicts": [{"statement": "s", "reason": "r", "verdict": supported}]}
        state["n"] += 1
        return write(state["n"], text)

    return answer


QUESTIONS = [
    "What fee applies to a lost card?",
    "When is the Central Library closed?",
    "How many e-books can a member borrow at once?",
    "Who may use the sewing machine?",
    "Where can the upper floor items be fetched from?",
    "Which desk has a hearing loop?",
]


def _question(n, text):
    return {"question": QUESTIONS[(n - 1) % len(QUESTIONS)], "answer": "It is."}


def test_one_structured_call_per_question_plus_the_faithfulness_judge(openai_server):
    openai_server.default = reply(_router(_question))
    ts = generate(CORPUS, 3, seed=0, llm=fake_chat_model(openai_server), mix=ONLY_SPECIFIC)
    assert len(ts.rows) == 3
    # the third question is styled as a web search (styles apply to written questions too)
    assert [r["user_input"] for r in ts.rows] == [*QUESTIONS[:2], "e-books member borrow once"]
    assert [r["query_style"] for r in ts.rows][2] == "WEB_SEARCH_LIKE"
    assert all(r["reference"] == "It is." and r["reference_faithfulness"] == 1.0 for r in ts.rows)
    # per question: one write + statements + verdicts
    assert openai_server.count() == ts.llm_calls == 9


def test_unsupported_references_are_dropped_and_counted(openai_server):
    openai_server.default = reply(_router(_question, supported=False))
    ts = generate(CORPUS, 2, seed=0, llm=fake_chat_model(openai_server), mix=ONLY_SPECIFIC)
    assert ts.rows == []
    assert ts.dropped["reference not supported by its passages (faithfulness)"] >= 2
    assert ts.notes and "0 of 2" in ts.notes[0]


def test_a_bad_reply_is_repaired_once_then_dropped_and_counted(openai_server):
    def write(n, text):
        if n <= 2:  # the first question: bad reply, bad repair -> dropped
            return "I cannot produce JSON today."
        if n == 3:  # the second: bad reply, good repair -> kept
            return "still no json"
        return {"question": QUESTIONS[n], "answer": "Yes."}

    openai_server.default = reply(_router(write))
    ts = generate(CORPUS, 2, seed=0, llm=fake_chat_model(openai_server), mix=ONLY_SPECIFIC)
    assert ts.dropped["unusable model reply (after one repair)"] == 1
    assert [r["user_input"] for r in ts.rows] == [QUESTIONS[4], QUESTIONS[5]]
    repairs = [
        r for r in openai_server.chat_requests() if "could not be used" in json.dumps(r.body)
    ]
    assert len(repairs) == 2


def test_unanswerable_key_terms_found_in_the_corpus_are_dropped(openai_server):
    def write(n, text):
        terms = ["library"] if n == 1 else ["zeppelin", "blimp"]
        return {"question": f"Unanswerable question {n} here?", "answer": "", "absent_terms": terms}

    openai_server.default = reply(_router(write))
    mix = {"single_hop_unanswerable_query_synthesizer": 1.0}
    ts = generate(CORPUS, 1, seed=0, llm=fake_chat_model(openai_server), mix=mix)
    assert ts.dropped["unanswerable question's key terms are in the corpus"] == 1
    assert [r["absent_terms"] for r in ts.rows] == [["zeppelin", "blimp"]]
    assert ts.rows[0]["reference_contexts"] == []
    assert openai_server.count() == 2  # no faithfulness check: nothing to be faithful to


def _testset_cli(server, tmp_path, monkeypatch, *flags):
    from typer.testing import CliRunner

    from ragloop.cli import app

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-testset-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    args = ["testset", str(CORPUS), "-n", "4", "--out", str(tmp_path / "ts.jsonl"), *flags]
    return CliRunner().invoke(app, [*args, "--llm", "openai:fake-model"])


def test_testset_reports_a_failing_server_in_one_line_after_its_retries(
    openai_server, tmp_path, monkeypatch
):
    from tests.fakes.openai_server import error

    openai_server.default = error(500)
    monkeypatch.setenv("RAGLOOP_LLM_MAX_RETRIES", "1")
    result = _testset_cli(openai_server, tmp_path, monkeypatch, "--timeout", "5")
    assert result.exit_code == 1, result.output
    assert "unexpected" not in result.output
    assert f"the LLM server {openai_server.url} failed after 2 attempts" in result.output
    assert openai_server.count() == 2


def test_testset_stops_at_a_flooding_server_after_one_request(openai_server, tmp_path, monkeypatch):
    openai_server.default = reply("x" * 2_000_000)
    result = _testset_cli(openai_server, tmp_path, monkeypatch, "--max-retries", "3")
    assert result.exit_code == 1 and "reply cap" in result.output, result.output
    assert openai_server.count() == 1
    assert not (tmp_path / "ts.jsonl").exists()


def test_testset_gives_up_on_a_server_whose_replies_never_parse(
    openai_server, tmp_path, monkeypatch
):
    openai_server.default = reply("I will not write JSON.")
    result = _testset_cli(openai_server, tmp_path, monkeypatch)
    assert result.exit_code == 1 and "3 unusable replies in a row" in result.output, result.output
    assert openai_server.count() == 6  # three questions, each asked and repaired once


def test_a_persona_is_shown_to_the_question_writer(openai_server):
    from ragloop.testset import Persona

    seen: list[str] = []

    def write(n, text):
        seen.append(text)
        return _question(n, text)

    openai_server.default = reply(_router(write))
    persona = Persona("Night-shift nurse", "borrows audiobooks late in the evening")
    llm = fake_chat_model(openai_server)
    ts = generate(CORPUS, 2, seed=0, llm=llm, mix=ONLY_SPECIFIC, personas=[persona])
    assert ts.rows and all(r["persona_name"] == "Night-shift nurse" for r in ts.rows)
    assert seen and all("borrows audiobooks late in the evening" in t for t in seen)
