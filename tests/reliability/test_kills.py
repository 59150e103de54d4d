"""kill -9 at random points of index, eval and experiment runs (bounded loops, local processes).

After every kill nothing half-written is visible (the folder or file is the old whole one or
the new whole one) and the next run works.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import time
from pathlib import Path

from tests.reliability import workers

SEED = 13


def _kill_after(procs, target, args, delay: float) -> None:
    p = procs.Process(target=target, args=args)
    p.start()
    time.sleep(delay)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert p.exitcode == -signal.SIGKILL


def _visible(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def test_kill_9_during_index_builds(tmp_path, procs, ledger, wordllama):
    from ragloop.retrievers.index import build_index, load_index

    rng, folder, kills, broken = random.Random(SEED), tmp_path / "idx", 5, 0
    for _ in range(kills):
        args = (str(folder), str(workers.CORPUS))
        _kill_after(procs, workers.index_forever, args, rng.uniform(0.2, 2.0))
        if folder.exists():
            try:
                index = load_index(folder, wordllama, "wordllama")
                broken += int(index.faiss.index.ntotal != len(index.chunks))
            except Exception:  # noqa: BLE001 - a half-built index is the failure counted
                broken += 1
    build_index(workers.CORPUS, wordllama, "wordllama", folder, chunk_size=400, chunk_overlap=50)
    after = load_index(folder, wordllama, "wordllama")
    leftovers = [p.name for p in tmp_path.iterdir() if ".build-" in p.name or ".old-" in p.name]
    ledger("kill -9: index", kills, broken)
    assert broken == 0 and after.chunks
    assert leftovers == []  # builds of killed processes are swept by the next build


def test_kill_9_during_eval_writes(tmp_path, procs, ledger):
    rng, out, cache, kills, broken = random.Random(SEED + 1), tmp_path / "out", tmp_path / "c", 5, 0
    dataset = tmp_path / "qa.jsonl"
    rows = [{"user_input": f"q{n}", "response": "x " * n, "reference": "x"} for n in range(200)]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for _ in range(kills):
        args = (str(dataset), str(out), str(cache))
        _kill_after(procs, workers.eval_forever, args, rng.uniform(0.3, 2.5))
        if (out / "rows.jsonl").exists():
            try:
                broken += int(len(workers.rows_of(out / "rows.jsonl")) != len(rows))
                json.loads((out / "summary.json").read_text(encoding="utf-8"))
            except Exception:  # noqa: BLE001 - a half-written file is the failure counted
                broken += 1
    workers.eval_writer(str(dataset), str(out), str(cache), 1, _ListQueue())
    ledger("kill -9: eval", kills, broken)
    assert broken == 0 and len(workers.rows_of(out / "rows.jsonl")) == len(rows)
    assert _visible(out) == ["rows.jsonl", "summary.json"]


def test_kill_9_during_experiment_runs(tmp_path, procs, ledger, wordllama):
    from ragloop.experiments.experiment import run_experiment

    qa = tmp_path / "qa.jsonl"
    qa.write_text(
        "".join(
            json.dumps({"user_input": q, "reference": "r"}) + "\n"
            for q in (
                "How much is a late fee?",
                "When is the library open?",
                "Who may book a room?",
            )
        ),
        encoding="utf-8",
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(
        "\n".join(
            [
                'name = "kill"',
                f"dataset = {json.dumps(str(qa))}",
                f"corpus = {json.dumps(str(workers.CORPUS))}",
                'metrics = ["answer_relevancy"]',
                f"cache_dir = {json.dumps(str(tmp_path / 'cache'))}",
                "bootstrap = 100",
                "[settings]",
                'web = "off"',
                "chunk_size = 400",
                "chunk_overlap = 50",
                "[grid]",
                'retrievers = ["dense", "sparse"]',
                "max_iterations = [1]",
                "[objective]",
                'maximize = "answer_relevancy"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    rng, out, kills, broken = random.Random(SEED + 2), tmp_path / "out", 3, 0
    for _ in range(kills):
        _kill_after(procs, workers.experiment_forever, (str(spec), str(out)), rng.uniform(0.5, 3))
        if (out / "rows.jsonl").exists():
            try:
                got = workers.rows_of(out / "rows.jsonl")
                with (out / "results.csv").open(encoding="utf-8") as fh:
                    table = list(csv.DictReader(fh))
                broken += int(len(got) != 6) + int(len(table) != 2)
            except Exception:  # noqa: BLE001 - a half-written file is the failure counted
                broken += 1
    result = run_experiment(spec, out=out, embeddings=wordllama)
    ledger("kill -9: experiment", kills, broken)
    assert broken == 0 and len(result.rows) == 6
    assert "rows.jsonl" in _visible(out) and "report.html" in _visible(out)


class _ListQueue(list):
    def put(self, item):  # the worker's error channel, in-process
        self.append(item)
        raise AssertionError(item)
