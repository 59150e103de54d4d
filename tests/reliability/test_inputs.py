"""Hostile input: datasets (hypothesis), corpus folders, per-run overrides, prompts, crashes."""

from __future__ import annotations

import asyncio
import codecs
import csv
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloop.errors import ConfigError, DatasetError
from ragloop.eval.schema import EvaluationDataset

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
ROW = st.fixed_dictionaries(
    {"user_input": TEXT.filter(lambda t: t.strip() == t and t), "response": TEXT}
)
ENCODINGS = {
    "utf-8": lambda t: t.encode("utf-8"),
    "utf-8 BOM": lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
    "utf-16": lambda t: t.encode("utf-16"),
    "utf-16-le, no BOM": lambda t: t.encode("utf-16-le"),
}
RUNS = {"n": 0, "failed": 0}


def _csv_text(rows: list[dict[str, str]], duplicate: bool) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)  # "\r\n" rows: a field holding \r or \n gets quoted
    header = ["user_input", "response"] + (["user_input"] if duplicate else [])
    writer.writerow(header)
    for r in rows:
        writer.writerow([r["user_input"], r["response"]] + (["shadow"] if duplicate else []))
    return buf.getvalue()


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(ROW, min_size=1, max_size=6),
    fmt=st.sampled_from(["jsonl", "json", "csv"]),
    encoding=st.sampled_from(sorted(ENCODINGS)),
    huge=st.booleans(),
    duplicate=st.booleans(),
    trailing_blank=st.booleans(),
)
def test_dataset_files_load_whatever_their_encoding(
    tmp_path, rows, fmt, encoding, huge, duplicate, trailing_blank
):
    if huge:  # over csv's default 131,072-character field limit
        rows = [{**rows[0], "response": "x" * 140_000}, *rows[1:]]
    if fmt == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        text += "\n \n" if trailing_blank else ""
    elif fmt == "json":
        text = json.dumps(rows, ensure_ascii=False)
    else:
        text = _csv_text(rows, duplicate)
    path = tmp_path / f"data-{RUNS['n']}.{fmt}"
    path.write_bytes(ENCODINGS[encoding](text))
    RUNS["n"] += 1
    try:
        ds = EvaluationDataset.load(path)
        got = [s.user_input for s in ds.samples]
        want = [r["user_input"] for r in rows]
        if fmt == "csv":  # csv keeps no leading/trailing distinction for empty cells
            want = [w for w in want]
        ok = got == want and not ds.errors and ds.total_rows == len(rows)
        if not ok:
            RUNS["failed"] += 1
        assert ok, (got, want, ds.errors)
        if huge:
            assert len(ds.samples[0].response or "") == 140_000
    finally:
        path.unlink(missing_ok=True)


def test_the_fuzz_ledger(ledger):
    ledger("fuzz: dataset files (hypothesis examples)", RUNS["n"], RUNS["failed"])
    assert RUNS["n"] > 0 and RUNS["failed"] == 0


@pytest.mark.parametrize(
    "content",
    [b'[{"user_input": ', b'\xef\xbb\xbf{"not": "a list"}', b"[" * 100_000, b"\xff\xfe\x00"],
)
def test_a_broken_json_dataset_is_a_clear_error(tmp_path, content, ledger):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(DatasetError) as caught:
        EvaluationDataset.load(path)
    ledger("datasets: broken .json is a clear error", 1, 0)
    assert str(path) in str(caught.value)


def test_a_bom_and_a_trailing_blank_line_do_not_cost_a_row(tmp_path, ledger):
    path = tmp_path / "qa.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + b'{"user_input": "a"}\n{"user_input": "b"}\n\n')
    ds = EvaluationDataset.load(path)
    csv_path = tmp_path / "qa.csv"
    csv_path.write_bytes(codecs.BOM_UTF8 + b"user_input,response\nq,r\n")
    ledger("datasets: BOM / trailing blank line", 2, 0)
    assert [s.user_input for s in ds.samples] == ["a", "b"] and ds.errors == []
    assert EvaluationDataset.load(csv_path).samples[0].user_input == "q"


def test_corpus_walking_reports_instead_of_crashing(tmp_path, monkeypatch, ledger):
    from ragloop.retrievers.corpus import load_corpus

    root = tmp_path / "corpus"
    root.mkdir()
    (root / "ok.md").write_text("# OK\n\nThe reading room opens at nine.", encoding="utf-8")
    (root / "locked.md").write_text("# Locked\n\nsecret", encoding="utf-8")
    (root / "utf16.txt").write_bytes("Sixteen-bit text about late fees.".encode("utf-16"))
    (root / "closed").mkdir()
    (root / "closed" / "inside.md").write_text("# In\n\nunreachable", encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nnot part of the corpus", encoding="utf-8")
    os.symlink(outside, root / "link.md")
    deep = root
    for _ in range(1000):
        deep = deep / "d"
        deep.mkdir()
    (deep / "deep.md").write_text("# Deep\n\nfound at the bottom", encoding="utf-8")
    real_read, real_scandir = Path.read_bytes, os.scandir

    def read_bytes(self):  # tests run as root, where chmod 000 still reads: simulate it
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    def scandir(path="."):
        if Path(path).name == "closed":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(os, "scandir", scandir)
    try:
        report = load_corpus(root)
    finally:
        monkeypatch.undo()
        _remove_chain(root / "d")  # shutil.rmtree (and pytest's cleanup) recurse: too deep
    sources = {c.metadata["source"] for c in report.chunks}
    skipped = dict(report.skipped)
    ledger("corpus: unreadable, deep, symlinked, UTF-16", 5, 0)
    assert "ok.md" in sources and "utf16.txt" in sources
    assert any(s.endswith("deep.md") for s in sources)
    assert "link.md" not in sources and "outside" in skipped["link.md"]
    assert "Permission denied" in skipped["locked.md"]
    assert "closed/" in skipped and "unreadable folder" in skipped["closed/"]


def _remove_chain(top: Path) -> None:
    """Delete a deep chain of single folders bottom-up, without recursion."""
    chain = []
    folder = top
    while folder.is_dir():
        chain.append(folder)
        subs = [p for p in folder.iterdir() if p.is_dir()]
        for f in folder.iterdir():
            if f.is_file():
                f.unlink()
        folder = subs[0] if subs else folder / "-none-"
    for folder in reversed(chain):
        folder.rmdir()


@pytest.mark.parametrize(
    "override",
    [
        {"max_iterations": 200},
        {"max_iterations": float("inf")},
        {"relevance_threshold": float("nan")},
        {"k": 0},
        {"retrieval": "sometimes"},
    ],
)
def test_per_run_overrides_are_held_to_the_settings_bounds(override, ledger):
    from ragloop.config import Context
    from ragloop.nodes.base import Deps
    from ragloop.pipeline import Pipeline
    from tests.fakes.retrieval import ListRetriever
    from tests.fakes.strategies import ScriptedStrategies

    pipe = Pipeline(
        Deps(
            strategies=ScriptedStrategies(["irrelevant"]),
            retrievers={"dense": ListRetriever("dense")},
        ),
        Context(retrievers=("dense",)),
    )
    with pytest.raises(ConfigError) as caught:
        pipe.run("q", **override)
    ledger("per-run overrides validated", 1, 0)
    assert next(iter(override)) in str(caught.value)


def test_a_graph_invoked_without_context_uses_the_defaults(ledger):
    from ragloop.graph.builder import build_graph
    from ragloop.nodes.base import Deps
    from tests.fakes.retrieval import ListRetriever
    from tests.fakes.strategies import ScriptedStrategies

    graph = build_graph(
        Deps(
            strategies=ScriptedStrategies(["irrelevant"]),
            retrievers={"dense": ListRetriever("dense")},
        )
    )
    from ragloop.config import Context

    with pytest.raises(Exception) as unknown:  # the default order names retrievers it lacks
        asyncio.run(graph.ainvoke({"question": "q"}))
    assert "AttributeError" not in type(unknown.value).__name__
    full = build_graph(
        Deps(
            strategies=ScriptedStrategies(["irrelevant"]),
            retrievers={n: ListRetriever(n) for n in Context().retrievers},
        )
    )
    state = asyncio.run(full.ainvoke({"question": "q"}))
    ledger("graph invoked with no context", 2, 0)
    assert (
        state["stop_reason"] == "max_iterations" and state["iteration"] == Context().max_iterations
    )


def test_web_results_are_labelled_web_in_the_judge_prompt(ledger, wordllama):
    from ragloop.nodes.llm import LLMStrategies
    from ragloop.nodes.offline import OfflineStrategies
    from ragloop.nodes.prompts import Passage
    from tests.fakes.chat import ScriptedChatModel

    reply = {
        "grades": [{"id": "c1", "grade": 2}, {"id": "c2", "grade": 2}],
        "claims": [{"id": "k1", "supported": True}],
    }
    llm = ScriptedChatModel(script=[reply])
    strategies = LLMStrategies(llm, wordllama, OfflineStrategies(wordllama, None))
    candidates = [Passage("From the web.", "web"), Passage("From the base.", "kb")]
    asyncio.run(strategies.assess("q", candidates, [], ["claim"], 1))
    prompt = "\n".join(str(m.content) for m in llm.calls[0]).replace('\\"', '"')
    ok = 'origin="web">\\nFrom the web.' in prompt and 'origin="kb">\\nFrom the base.' in prompt
    ledger("judge prompt labels web results", 1, int(not ok))
    assert ok, prompt


def test_a_crash_while_writing_rows_leaves_the_old_file_whole(tmp_path, monkeypatch, ledger):
    from ragloop.eval.runner import evaluate

    rows = [{"user_input": f"q{n}", "response": "a", "reference": "a"} for n in range(50)]
    out = tmp_path / "out"
    evaluate(rows, ["exact_match"], cache=False).write(out)
    before = (out / "rows.jsonl").read_bytes()
    calls = {"n": 0}
    real = json.dumps

    def dies_halfway(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 25:
            raise KeyboardInterrupt  # what a kill looks like from inside
        return real(*args, **kwargs)

    result = evaluate(rows, ["exact_match"], cache=False)
    monkeypatch.setattr(json, "dumps", dies_halfway)
    with pytest.raises(KeyboardInterrupt):
        result.write(out)
    monkeypatch.setattr(json, "dumps", real)
    ledger(
        "atomic writes: crash mid rows.jsonl", 1, int((out / "rows.jsonl").read_bytes() != before)
    )
    assert (out / "rows.jsonl").read_bytes() == before
    assert [p.name for p in out.iterdir() if p.suffix == ".tmp"] == []
