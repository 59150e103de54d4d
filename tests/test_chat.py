"""``ragloop chat``: turns, restart and resume, follow-ups, /trace, Ctrl-C; ``eval-traces``."""

import asyncio
import json
import threading

import pytest
from typer.testing import CliRunner

from ragloop.chat.session import ChatSession, history_from_state
from ragloop.chat.traces import TraceStore
from ragloop.cli import app
from ragloop.config import Context
from ragloop.errors import RagloopError
from ragloop.nodes.base import Deps
from ragloop.nodes.condense import LLMCondenser
from ragloop.pipeline import Pipeline
from tests.conftest import CORPUS
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.retrieval import ListRetriever
from tests.fakes.strategies import ScriptedStrategies

KEY = "sk-proj-" + "Q7w8E9r0" * 4


def flat(text: str) -> str:
    """Output with rich's line wrapping undone."""
    return " ".join(text.split())


def chat(*args: str, input: str):
    result = CliRunner().invoke(app, ["chat", *args], input=input, catch_exceptions=False)
    return result, flat(result.output)


def test_chat_turns_restart_resume_follow_up_and_trace(data_dir):
    corpus = ["--corpus", str(CORPUS)]
    first, out = chat(
        "--thread",
        "demo",
        *corpus,
        input=("How much does an interlibrary loan cost?\n\n   \n/trace\n/quit\n"),
    )
    assert first.exit_code == 0, out
    assert "thread demo (new)" in out
    assert "interlibrary-loan.md" in out  # the answer comes with its citations
    assert "what and why" in out and "stop: " in out and "scores:" in out  # /trace
    store = TraceStore(data_dir / "traces.sqlite")
    assert len(store) == 1  # the empty lines were ignored

    # a restart: a new process-like invocation resumes the same thread from the checkpointer
    second, out = chat(
        "--thread", "demo", *corpus, input=("and how long does that take?\n/history\n")
    )
    assert second.exit_code == 0, out  # end of input leaves cleanly
    assert "thread demo (resumed, 1 earlier turn(s))" in out
    assert "(as: How long does the interlibrary loan take?)" in out
    # /history: what the user typed, with the standalone question beside it
    assert (
        "1. How much does an interlibrary loan cost? 2. and how long does that take? "
        "(read as: How long does the interlibrary loan take?)"
    ) in out
    turns = store.turns()
    assert [t.thread for t in turns] == ["demo", "demo"]
    follow_up = turns[1]
    assert follow_up.original == "and how long does that take?"
    assert follow_up.question == "How long does the interlibrary loan take?"
    assert follow_up.contexts and all(c["id"] and c["text"] for c in follow_up.contexts)
    assert follow_up.steps[0]["node"] == "draft" and follow_up.stop_reason
    assert follow_up.model == "none" and follow_up.latency_ms > 0

    # a new thread has no memory of the old one; /trace says so
    third, out = chat(*corpus, input="/trace\n/new other\n/history\n/quit\n")
    assert third.exit_code == 0 and "(new)" in out
    assert "no finished turn in this thread yet" in out and "new thread other" in out

    # the recorded traffic, evaluated offline
    report = CliRunner().invoke(app, ["eval-traces", str(data_dir / "traces.sqlite"), "--json"])
    assert report.exit_code == 0, report.output
    data = json.loads(report.stdout)
    assert data["turns"] == 2 and set(data["means"]) == {
        "offline_answer_relevancy",
        "offline_context_relevance",
    }
    assert {row["question"] for row in data["lowest"]} == {t.question for t in turns}
    text = CliRunner().invoke(app, ["eval-traces", str(data_dir / "traces.sqlite"), "--quiet"])
    assert "lowest-scoring questions" in text.output and "hit the iteration cap" in text.output
    via_eval = CliRunner().invoke(app, ["eval", "--traces", str(data_dir / "traces.sqlite"), "-q"])
    assert via_eval.exit_code == 0 and "lowest-scoring questions" in via_eval.output
    assert CliRunner().invoke(app, ["eval"]).exit_code == 2  # neither a dataset nor --traces
    later = CliRunner().invoke(
        app, ["eval-traces", str(data_dir / "traces.sqlite"), "--since", "2999-01-01"]
    )
    assert "no turns recorded" in later.output


def test_eval_traces_needs_an_existing_store(tmp_path):
    result = CliRunner().invoke(app, ["eval-traces", str(tmp_path / "missing.sqlite")])
    assert result.exit_code == 2 and "no trace store" in flat(result.output)
    assert not (tmp_path / "missing.sqlite").exists()


class SlowStrategies(ScriptedStrategies):
    """The judge waits until released, so a turn can be cancelled while it runs."""

    def __init__(self):
        super().__init__(["sufficient"])
        self.block = True
        self.questions: list[str] = []

    async def draft(self, question, prompt=None):
        self.questions.append(question)
        return await super().draft(question, prompt)

    async def assess(self, *args, **kwargs):
        while self.block:
            await asyncio.sleep(0.01)
        return await super().assess(*args, **kwargs)


def fake_pipeline(strategies=None):
    strategies = strategies or ScriptedStrategies(["sufficient"])
    deps = Deps(strategies=strategies, retrievers={"dense": ListRetriever("dense")})
    return Pipeline(deps, Context(retrievers=("dense",)))


def test_ctrl_c_cancels_the_turn_not_the_program(data_dir, monkeypatch):
    import ragloop.cli.chat as cli_chat
    import ragloop.pipeline

    slow = SlowStrategies()  # the first turn cannot finish before Ctrl-C arrives
    monkeypatch.setattr(ragloop.pipeline, "build_pipeline", lambda *a, **k: fake_pipeline(slow))
    real_wait, calls = cli_chat._wait, []

    def interrupted_once(future):
        calls.append(future)
        if len(calls) == 1:
            raise KeyboardInterrupt
        slow.block = False
        return real_wait(future)

    monkeypatch.setattr(cli_chat, "_wait", interrupted_once)
    result, out = chat(input="How long can I borrow a book?\nWhat is the Maker Lab?\n/history\n")
    assert result.exit_code == 0, out
    assert "turn cancelled" in out
    assert "1. What is the Maker Lab?" in out and "2." not in out.split("/history")[-1]


def test_cancel_mid_run_keeps_the_history_consistent(tmp_path):
    slow = SlowStrategies()
    steps: list[str] = []
    reached = threading.Event()

    def on_step(node, detail):
        steps.append(node)
        if node == "retrieve":
            reached.set()

    store = TraceStore(tmp_path / "traces.sqlite")
    with ChatSession(
        fake_pipeline(slow), tmp_path / "chat.sqlite", thread_id="t", traces=store
    ) as s:
        slow.block = False
        s.turn("How much does an interlibrary loan cost?")
        slow.block = True
        future = s.submit(s.aturn("and how long does that take?", on_step))
        assert reached.wait(10)
        s.cancel(future)
        assert future.cancelled() and "judge" not in steps
        assert [t.question for t in s.history()] == ["How much does an interlibrary loan cost?"]
        assert s.call(s.alast_result()).question == "How much does an interlibrary loan cost?"
        slow.block = False
        again = s.turn("and is it free?")
        assert again.question == "Is the interlibrary loan free?"
        assert len(s.history()) == 2
    assert [t.question for t in store.turns()] == [
        "How much does an interlibrary loan cost?",
        "Is the interlibrary loan free?",
    ]


def test_llm_condensing_and_secrets_in_chat(tmp_path):
    strategies = ScriptedStrategies(["sufficient"])
    strategies.name = "llm"
    strategies.llm = ScriptedChatModel(script=["How long does an interlibrary loan take?"])
    dense = ListRetriever("dense")
    condenser = LLMCondenser(strategies.llm)  # what build_pipeline hands a graph with an LLM
    deps = Deps(strategies=strategies, retrievers={"dense": dense}, condenser=condenser)
    pipeline = Pipeline(deps, Context(retrievers=("dense",)), model="ScriptedChatModel")
    store = TraceStore(tmp_path / "traces.sqlite")
    with ChatSession(pipeline, tmp_path / "chat.sqlite", traces=store) as session:
        session.turn(f"My key {KEY} — how much does an interlibrary loan cost?")
        result = session.turn("and how long does that take?")
        assert result.question == "How long does an interlibrary loan take?"
        assert dense.queries[-1] == "How long does an interlibrary loan take?"
        assert len(strategies.llm.calls) == 1  # one condensing call, on the follow-up only
        assert "[REDACTED]" in session.history()[0].question
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert KEY.encode() not in raw and KEY[8:].encode() not in raw
    assert store.turns()[1].model == "ScriptedChatModel"


def test_history_from_state_drops_an_unfinished_turn():
    done = {"role": "user", "content": "a?", "standalone": "A?"}
    values = {
        "messages": [
            done,
            {"role": "assistant", "content": "yes"},
            {"role": "user", "content": "b?", "standalone": "B?"},
        ],
        "question": "B?",
        "answer": "no",
    }
    assert [t.question for t in history_from_state(values, finished=True)] == ["A?", "B?"]
    assert [t.question for t in history_from_state(values, finished=False)] == ["A?"]
    assert history_from_state({}, finished=True) == []


def test_a_failed_turn_is_reported_without_secrets_and_the_chat_goes_on(data_dir, monkeypatch):
    import ragloop.pipeline

    class Flaky(ScriptedStrategies):
        failed = False

        async def draft(self, question, prompt=None):
            if not Flaky.failed:
                Flaky.failed = True
                raise RuntimeError(f"connection refused (api_key={KEY})")
            return await super().draft(question, prompt)

    flaky = Flaky(["sufficient"])
    monkeypatch.setattr(ragloop.pipeline, "build_pipeline", lambda *a, **k: fake_pipeline(flaky))
    result, out = chat(input="first?\nsecond?\n/quit\n")
    assert result.exit_code == 0, out
    assert "error: RuntimeError: connection refused" in out and KEY not in result.output
    assert "Answer from dense" in out
    assert [t.question for t in TraceStore(data_dir / "traces.sqlite").turns()] == ["second?"]


def test_a_chat_memory_locked_at_set_up_is_waited_out_not_an_error(tmp_path, monkeypatch):
    # before: another process setting up (or recovering) the same file made the open fail at
    # once with "database is locked"; now the set-up is retried until the lock is gone
    import sqlite3

    from ragloop.chat.memory import RedactingSaver

    real, calls = RedactingSaver.setup, []

    async def locked_twice(self):
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return await real(self)

    monkeypatch.setattr(RedactingSaver, "setup", locked_twice)
    with ChatSession(fake_pipeline(), tmp_path / "chat.sqlite") as s:
        assert s.turn("How much does an interlibrary loan cost?").answer
    assert len(calls) >= 3  # two locked set-ups, then the one that opened it


def test_a_chat_memory_that_cannot_be_opened_says_how_to_fix_it(tmp_path):
    folder = tmp_path / "chat.sqlite"
    folder.mkdir()  # a folder where the file should be: not a lock, no waiting
    with pytest.raises(RagloopError, match="check the data folder"):
        ChatSession(fake_pipeline(), folder)


def test_chat_memory_redaction_reaches_inside_langchain_messages():
    from langchain_core.messages import HumanMessage

    from ragloop.redact import redact_value

    key = "sk-" + "a1b2c3d4" * 3
    message = HumanMessage(content=f"my key {key}", additional_kwargs={"standalone": key}, id="m1")
    (clean,) = redact_value([message])
    assert isinstance(clean, HumanMessage) and clean.id == "m1"
    assert key not in clean.content and key not in str(clean.additional_kwargs)
