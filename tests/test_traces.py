"""The trace store: redaction before writing, concurrent writer processes, weak-spot reports."""

import math
import multiprocessing
import sqlite3

import pytest

from ragloop.chat.traces import REDACTED, Trace, TraceStore, record_turn, redact
from ragloop.errors import ConfigError

KEY = "sk-proj-" + "A1b2C3d4" * 4
TAVILY = "tvly-" + "Z9y8X7w6" * 3
BEARER = "eyJhbGciOiJIUzI1NiJ9.payload123.sig456"
ENV_SECRET = "s3cr3t-value-from-env-42"


def run_result(question="q", answer="a", **kw):
    from ragloop.graph.result import RunResult

    base = dict(
        question=question,
        answer=answer,
        citations=[{"n": 1, "id": "doc#0", "title": "Doc"}],
        contexts=[{"id": "doc#0", "text": "some text", "source": "doc.md", "grade": 2}],
        scores={"answer_relevancy": 0.8},
        iterations=0,
        actions=[],
        steps=[{"node": "draft", "detail": "no draft"}],
        stop_reason="sufficient",
        retrieved=True,
        latency_ms=12.5,
    )
    base.update(kw)
    return RunResult(**base)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"my key is {KEY}.", f"my key is {REDACTED}."),
        (f"search with {TAVILY}", f"search with {REDACTED}"),
        (f"Authorization: Bearer {BEARER}", f"Authorization: {REDACTED}"),
        ('{"authorization": "Basic dXNlcjpwYXNz"}', f'{{"authorization": "{REDACTED}"}}'),
        ("api_key=abcd1234efgh&x=1", f"api_key={REDACTED}&x=1"),
        (f"token from env: {ENV_SECRET}", f"token from env: {REDACTED}"),
        ("What are Bearer tokens?", "What are Bearer tokens?"),  # words stay words
        ("How much does a lost card cost?", "How much does a lost card cost?"),
    ],
)
def test_redact(text, expected):
    env = {"MY_SERVICE_TOKEN": ENV_SECRET, "SHORT_KEY": "abc", "HOME": "/home/me"}
    assert redact(text, env) == expected


def test_redact_walks_containers():
    env = {"X_SECRET": ENV_SECRET}
    out = redact({"a": [f"x {ENV_SECRET}", {"b": KEY}], "n": 3}, env)
    assert out == {"a": [f"x {REDACTED}", {"b": REDACTED}], "n": 3}


def test_key_like_values_never_reach_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGLOOP_TEST_API_KEY", ENV_SECRET)  # found through os.environ
    store = TraceStore(tmp_path / "traces.sqlite")
    result = run_result(
        question=f"why does {KEY} fail?",
        answer=f"Send Authorization: Bearer {BEARER} and {TAVILY}.",
        contexts=[{"id": "c1", "text": f"OPENAI_API_KEY={KEY}", "source": "x.md"}],
        actions=[{"action": "rewrite", "query": f"{ENV_SECRET} query"}],
        steps=[{"node": "retrieve", "detail": f"api_key={ENV_SECRET}"}],
        scores={"answer_relevancy": math.nan},
    )
    record_turn(store, result, "t1", f"ChatOpenAI:gpt api_key={KEY}", f"my key is {KEY}")
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for secret in (KEY, TAVILY, BEARER, ENV_SECRET, KEY[8:], "dXNlcjpwYXNz"):
        assert secret.encode() not in raw
    (turn,) = store.turns()
    assert REDACTED in turn.question and REDACTED in turn.original and REDACTED in turn.model
    assert turn.contexts[0]["id"] == "c1"
    assert turn.scores == {"answer_relevancy": None}  # NaN stored as null


def test_round_trip_and_filters(tmp_path):
    store = TraceStore(tmp_path / "t.sqlite")
    record_turn(store, run_result("first"), "a", "none", "first?")
    store.add(Trace(question="old", answer="x", thread="b", ts="2020-01-01T00:00:00.000000+00:00"))
    record_turn(store, run_result("second"), "a", "none", None, source="ask")
    assert [t.question for t in store.turns()] == ["old", "first", "second"]
    assert [t.question for t in store.turns(thread="a")] == ["first", "second"]
    assert [t.question for t in store.turns(since="2021-01-01")] == ["first", "second"]
    second = store.turns()[-1]
    assert second.source == "ask" and second.original == "second" and second.latency_ms == 12.5
    assert second.steps == [{"node": "draft", "detail": "no draft"}] and len(store) == 3
    mode = sqlite3.connect(tmp_path / "t.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def _writer(path: str, worker: int, turns: int, start, errors) -> None:
    try:
        store = TraceStore(path)
        start.wait(30)
        for i in range(turns):
            store.add(Trace(question=f"q{i}", answer="a" * 2000, thread=f"w{worker}"))
    except BaseException as exc:  # reported to the parent, which fails the test
        errors.put(f"worker {worker}: {type(exc).__name__}: {exc}")
        raise


def test_concurrent_writer_processes_lose_no_turn(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("spawn")
    workers, turns = 6, 60
    start, errors = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(path, w, turns, start, errors)) for w in range(workers)
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    failures = []
    while not errors.empty():
        failures.append(errors.get())
    assert failures == [] and all(p.exitcode == 0 for p in procs)
    stored = TraceStore(path).turns()
    assert len(stored) == workers * turns
    assert {(t.thread, t.question) for t in stored} == {
        (f"w{w}", f"q{i}") for w in range(workers) for i in range(turns)
    }


def test_parse_since():
    from ragloop.chat.weak_spots import parse_since

    assert parse_since("2024-05-01").startswith("2024-05-01T00:00:00")
    assert parse_since("2024-05-01T12:30+02:00").startswith("2024-05-01T10:30:00")
    assert parse_since("7d") < parse_since("1h") and parse_since(None) is None
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        parse_since("last tuesday")


def _trace(question, stop="sufficient", actions=(), contexts=("text",), answer="An answer."):
    return Trace(
        question=question,
        answer=answer,
        thread="t",
        stop_reason=stop,
        actions=[{"action": a} for a in actions],
        contexts=[{"id": f"c{i}", "text": c} for i, c in enumerate(contexts)],
    )


def test_weak_spots_report():
    from ragloop.chat.weak_spots import Scored, find_weak_spots

    traces = [
        _trace("good", actions=()),
        _trace("capped", stop="max_iterations", actions=("swap", "swap", "rewrite")),
        _trace("bad", stop="max_iterations", actions=("skip:web", "swap")),
        _trace("unmeasured", contexts=()),
    ]
    values = [
        {"m1": 0.9, "m2": 0.8},
        {"m1": 0.4, "m2": math.nan},
        {"m1": 0.1, "m2": 0.2},
        {"m1": math.nan, "m2": math.nan},
    ]
    spots = find_weak_spots(traces, Scored(["m1", "m2"], values), top=2)
    assert [row["question"] for row in spots.lowest] == ["bad", "capped"]
    assert spots.lowest[0]["score"] == pytest.approx(0.15)
    assert spots.lowest[1]["scores"] == {"m1": 0.4, "m2": None}
    assert spots.cap_share == 0.5 and spots.capped == 2
    assert spots.actions == [("swap", 3), ("rewrite", 1)] and spots.skipped_actions == [("web", 1)]
    assert spots.means["m1"] == pytest.approx((0.9 + 0.4 + 0.1) / 3)
    assert spots.coverage == {"m1": 0.75, "m2": 0.5}
    assert spots.to_dict()["means"]["m2"] == pytest.approx(0.5)


@pytest.mark.parametrize("runner", [True, False])
def test_score_traces_offline(runner, monkeypatch, hash_embeddings):
    import asyncio
    import builtins

    from ragloop.chat.weak_spots import ascore_traces

    if not runner:  # the direct path, used when the evaluation runner is not installed
        real_import = builtins.__import__

        def no_runner(name, *args, **kwargs):
            if name == "ragloop.eval.runner":
                raise ModuleNotFoundError(name, name=name)
            return real_import(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", no_runner)
    traces = [
        _trace(
            "How long can I borrow a book?",
            answer="Books are lent for three weeks.",
            contexts=("Books are lent for three weeks.",),
        ),
        _trace("Is it open on Sunday?", answer="I don't know.", contexts=()),
    ]
    scored = asyncio.run(ascore_traces(traces, embeddings=hash_embeddings))
    assert scored.names == ["offline_answer_relevancy", "offline_context_relevance"]
    first, second = scored.values
    assert not math.isnan(first["offline_answer_relevancy"])
    assert 0 <= first["offline_context_relevance"] <= 1
    assert math.isnan(second["offline_context_relevance"])  # nothing was retrieved
    assert second["offline_answer_relevancy"] == 0.0  # noncommittal
