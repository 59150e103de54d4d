"""Concurrent writers: index, chat turns on one thread, traces, eval outputs. Lost 0, corrupt 0."""

from __future__ import annotations

import json
import queue
from pathlib import Path

from tests.reliability import workers


def _drain(q) -> list[str]:
    out = []
    while True:
        try:
            out.append(q.get(timeout=0.2))
        except queue.Empty:
            return out


def _join(processes, timeout: float = 120.0) -> None:
    for p in processes:
        p.join(timeout)
        assert p.exitcode == 0, f"{p.name} ended with {p.exitcode}"


def test_index_writers_and_a_reader_never_see_a_half_built_index(
    tmp_path, procs, ledger, wordllama
):
    from ragloop.retrievers.index import load_index

    folder, writers, rounds = tmp_path / "idx", 3, 2
    errors, stop, loads = procs.Queue(), procs.Event(), procs.Value("i", 0)
    workers.index_writer(str(folder), str(workers.CORPUS), 1, errors)  # readers start on an index
    reader = procs.Process(target=workers.index_reader, args=(str(folder), stop, errors, loads))
    reader.start()
    ps = [
        procs.Process(
            target=workers.index_writer, args=(str(folder), str(workers.CORPUS), rounds, errors)
        )
        for _ in range(writers)
    ]
    for p in ps:
        p.start()
    _join(ps)
    stop.set()
    _join([reader])
    problems = _drain(errors)
    index = load_index(folder, wordllama, "wordllama")
    corrupt = int(index.faiss.index.ntotal != len(index.chunks)) + len(problems)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("idx", ".idx.lock")]
    ledger(
        "concurrency: index writers",
        writers * rounds + loads.value,
        corrupt,
        f"index: {writers} writers x {rounds} builds + 1 reader x {loads.value} loads: "
        f"lost 0, corrupt {corrupt}",
    )
    assert problems == [] and corrupt == 0
    assert leftovers == []  # no build or swap folder left behind
    assert loads.value > 0


def test_chat_turns_on_one_thread_from_three_processes_are_all_remembered(tmp_path, procs, ledger):
    from ragloop.chat.session import ChatSession
    from tests.reliability.workers import _SlowDraft

    db, chats, turns = tmp_path / "chat.sqlite", 3, 4
    errors = procs.Queue()
    ps = [
        procs.Process(target=workers.chat_turns, args=(str(db), "shared", n, turns, errors))
        for n in range(chats)
    ]
    for p in ps:
        p.start()
    _join(ps)
    problems = _drain(errors)
    from ragloop.config import Context
    from ragloop.nodes.base import Deps
    from ragloop.pipeline import Pipeline
    from tests.fakes.retrieval import ListRetriever

    pipe = Pipeline(
        Deps(strategies=_SlowDraft(), retrievers={"dense": ListRetriever("dense")}),
        Context(retrievers=("dense",)),
    )
    with ChatSession(pipe, db, thread_id="shared") as session:
        remembered = [t.original for t in session.history()]
    expected = {f"question {w}-{n}" for w in range(chats) for n in range(turns)}
    lost = len(expected - set(remembered))
    ledger(
        "concurrency: chat turns on one thread",
        chats * turns,
        lost + len(problems),
        f"chat: {chats} processes x {turns} turns on one thread: remembered "
        f"{len(remembered)}/{chats * turns}, lost {lost}, corrupt {len(problems)}",
    )
    assert problems == []
    assert sorted(remembered) == sorted(expected)  # none lost, none twice


def test_trace_writers_lose_no_turn(tmp_path, procs, ledger):
    from ragloop.chat.traces import TraceStore

    path, writers, count = tmp_path / "traces.sqlite", 3, 20
    errors = procs.Queue()
    ps = [
        procs.Process(target=workers.trace_writer, args=(str(path), n, count, errors))
        for n in range(writers)
    ]
    for p in ps:
        p.start()
    _join(ps)
    problems = _drain(errors)
    questions = [t.question for t in TraceStore(path).turns()]
    lost = writers * count - len(set(questions))
    ledger(
        "concurrency: trace writers",
        writers * count,
        lost + len(problems),
        f"traces: {writers} writers x {count} turns: lost {lost}, corrupt {len(problems)}",
    )
    assert problems == [] and lost == 0 and len(questions) == writers * count


def test_eval_writers_sharing_a_cache_and_an_output_folder(tmp_path, procs, ledger):
    dataset = tmp_path / "qa.jsonl"
    rows = [{"user_input": f"q{n}", "response": f"a {n}", "reference": f"a {n}"} for n in range(30)]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out, cache, writers, rounds = tmp_path / "out", tmp_path / "cache", 3, 2
    errors = procs.Queue()
    ps = [
        procs.Process(
            target=workers.eval_writer, args=(str(dataset), str(out), str(cache), rounds, errors)
        )
        for _ in range(writers)
    ]
    for p in ps:
        p.start()
    _join(ps)
    problems = _drain(errors)
    written = workers.rows_of(out / "rows.jsonl")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    corrupt = int(len(written) != len(rows)) + int(summary["metrics"]["exact_match"]["total"] != 30)
    ledger(
        "concurrency: eval writers",
        writers * rounds,
        corrupt + len(problems),
        f"eval: {writers} writers x {rounds} runs into one --out and cache: lost 0, corrupt "
        f"{corrupt + len(problems)}",
    )
    assert problems == [] and corrupt == 0
    assert all(r["exact_match"] == 1.0 for r in written)
    assert not [p for p in Path(out).iterdir() if p.name.endswith(".tmp")]
