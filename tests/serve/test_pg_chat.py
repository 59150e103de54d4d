"""``ragloop chat`` on Postgres: sessions on two replicas share one thread and lose no turn."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

from typer.testing import CliRunner

from ragloop.chat.pgmemory import pg_thread_lock
from ragloop.chat.pgtraces import PgTraceStore
from ragloop.chat.session import ChatSession
from ragloop.cli import app
from tests.conftest import CORPUS
from tests.fakes.strategies import ScriptedStrategies
from tests.test_chat import KEY, fake_pipeline


class Unhurried(ScriptedStrategies):
    """The judge takes a moment, so two unlocked turns would overlap (read, run, save)."""

    def __init__(self) -> None:
        super().__init__(["sufficient"])

    async def assess(self, *args, **kwargs):
        await asyncio.sleep(0.05)
        return await super().assess(*args, **kwargs)


def test_two_replicas_on_one_thread_lose_no_turn(pg_url, tmp_path):
    thread = uuid.uuid4().hex
    store = PgTraceStore(pg_url)
    # separate folders: no file lock can be shared, only the Postgres advisory lock
    one = ChatSession(
        fake_pipeline(Unhurried()), tmp_path / "a" / "chat.sqlite", thread_id=thread,
        traces=store, database_url=pg_url,
    )  # fmt: skip
    two = ChatSession(
        fake_pipeline(Unhurried()), tmp_path / "b" / "chat.sqlite", thread_id=thread,
        traces=store, database_url=pg_url,
    )  # fmt: skip
    try:
        asked = {s: [f"What is part {s} number {i}?" for i in range(3)] for s in ("A", "B")}
        errors: list[BaseException] = []

        def talk(session: ChatSession, questions: list[str]) -> None:
            try:
                for q in questions:
                    session.turn(q)
            except BaseException as exc:  # reported below
                errors.append(exc)

        workers = [
            threading.Thread(target=talk, args=(one, asked["A"])),
            threading.Thread(target=talk, args=(two, asked["B"])),
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(120)
        assert not errors, errors
        for session in (one, two):  # both replicas read the whole thread back from Postgres
            history = [t.original for t in session.history()]
            assert sorted(history) == sorted(asked["A"] + asked["B"])
            assert history.index(asked["A"][0]) < history.index(asked["A"][2])
        recorded = [t.original for t in store.turns(thread=thread)]
        assert sorted(recorded) == sorted(asked["A"] + asked["B"])
    finally:
        one.close()
        two.close()
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # no SQLite memory


def test_a_held_thread_lock_makes_the_other_replica_wait(pg_url, tmp_path):
    thread = uuid.uuid4().hex
    held, release = threading.Event(), threading.Event()

    async def hold() -> None:
        async with pg_thread_lock(pg_url, thread):
            held.set()
            while not release.is_set():
                await asyncio.sleep(0.01)

    holder = threading.Thread(target=asyncio.run, args=(hold(),))
    holder.start()
    assert held.wait(30)
    with ChatSession(
        fake_pipeline(), tmp_path / "chat.sqlite", thread_id=thread, database_url=pg_url
    ) as session:
        other = ChatSession(
            fake_pipeline(), tmp_path / "chat.sqlite", thread_id="x" + thread, database_url=pg_url
        )
        try:
            other.turn("What is a pump?")  # another thread is not held up
        finally:
            other.close()
        waiting = session.submit(session.aturn("What is a valve?"))
        time.sleep(0.5)
        assert not waiting.done()  # the turn waits for the lock held elsewhere
        release.set()
        holder.join(30)
        assert waiting.result(60).question == "What is a valve?"
        assert [t.original for t in session.history()] == ["What is a valve?"]


def _offline_cli_on_postgres(monkeypatch, tmp_path, pg_url):
    """The CLI offline, its files under tmp_path, its shared state in the test's Postgres."""
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    monkeypatch.setenv("RAGLOOP_DATABASE_URL", pg_url)
    for name in ("RAGLOOP_LLM", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_ragloop_chat_keeps_memory_and_traces_in_postgres(pg_url, tmp_path, monkeypatch):
    _offline_cli_on_postgres(monkeypatch, tmp_path, pg_url)
    thread = uuid.uuid4().hex
    args = ["chat", "--thread", thread, "--corpus", str(CORPUS)]
    first = CliRunner().invoke(
        app, args, input=f"My key {KEY}: how much does an interlibrary loan cost?\n"
    )
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(app, args, input="/history\n")
    assert second.exit_code == 0, second.output
    assert "resumed, 1 earlier turn(s)" in " ".join(second.output.split())
    data = tmp_path / "data"
    assert not (data / "chat.sqlite").exists() and not (data / "traces.sqlite").exists()
    assert [t.thread for t in PgTraceStore(pg_url).turns(thread=thread)] == [thread]
    import psycopg

    raw = b""
    with psycopg.connect(pg_url) as conn:  # the checkpointer's tables hold no secret
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            for row in conn.execute(f"SELECT * FROM {table}").fetchall():
                raw += b"".join(v if isinstance(v, bytes) else str(v).encode() for v in row)
    assert b"interlibrary" in raw and KEY[8:].encode() not in raw


def test_ragloop_ask_records_its_turn_in_postgres_too(pg_url, tmp_path, monkeypatch):
    _offline_cli_on_postgres(monkeypatch, tmp_path, pg_url)
    question = f"How much does an interlibrary loan cost? ({uuid.uuid4().hex})"
    out = CliRunner().invoke(app, ["ask", question, "--corpus", str(CORPUS)])
    assert out.exit_code == 0, out.output
    assert not (tmp_path / "data" / "traces.sqlite").exists()  # every replica sees one table
    asked = [t for t in PgTraceStore(pg_url).turns() if t.question == question]
    assert len(asked) == 1 and asked[0].source == "ask"
