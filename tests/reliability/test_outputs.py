"""Every output path is checked against every input before any work.

Never a corpus file, never an input dataset, never inside the corpus being read, never a
folder holding an input; and a folder of the user's files is refused before scoring starts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture
def corpus(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURES / "corpus", tmp_path / "corpus"))


@pytest.fixture
def qa(tmp_path) -> Path:
    return Path(shutil.copy(FIXTURES / "qa.jsonl", tmp_path / "qa.jsonl"))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _refused(result, ledger, kind: str) -> None:
    ok = result.exit_code == 2 and "nothing was changed" in " ".join(result.output.split())
    ledger(f"outputs vs inputs: {kind}", 1, int(not ok))
    assert ok, result.output


def test_testset_never_writes_over_or_into_its_corpus(tmp_path, corpus, cli, ledger):
    before = _snapshot(corpus)
    page = corpus / "room-booking.md"
    _refused(cli("testset", corpus, "-n", "2", "--out", page, "--force"), ledger, "testset")
    _refused(cli("testset", corpus, "-n", "2", "--out", corpus / "new.jsonl"), ledger, "testset")
    # given an index folder, the corpus it was built from is an input too
    assert cli("index", corpus, "--out", tmp_path / "idx").exit_code == 0
    inside = corpus / "qa.jsonl"
    _refused(cli("testset", tmp_path / "idx", "-n", "2", "--out", inside), ledger, "testset")
    assert _snapshot(corpus) == before


def test_index_out_inside_the_corpus_is_refused(tmp_path, corpus, cli, ledger):
    before = _snapshot(corpus)
    for out in (corpus / "sub", corpus / "a" / "b", corpus, tmp_path):
        _refused(cli("index", corpus, "--out", out), ledger, "index --out")
    assert _snapshot(corpus) == before and not (corpus / "sub").exists()


def test_eval_out_never_the_dataset_nor_its_folder(tmp_path, qa, cli, ledger):
    data = qa.read_bytes()
    for out in (qa, tmp_path):
        _refused(cli("eval", qa, "--out", out, "-q"), ledger, "eval --out")
    assert qa.read_bytes() == data


def test_eval_refuses_a_user_folder_before_scoring(tmp_path, qa, cli, ledger, monkeypatch):
    import ragloop.eval.runner as runner

    calls = []
    monkeypatch.setattr(runner, "evaluate", lambda *a, **k: calls.append(a))
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.md").write_text("keep", encoding="utf-8")
    result = cli("eval", qa, "--out", folder, "-q")
    said = "nothing was changed" in " ".join(result.output.split())
    ok = result.exit_code != 0 and not calls and said
    ledger("outputs vs inputs: eval --out user folder, checked first", 1, int(not ok))
    assert ok, result.output
    assert (folder / "notes.md").read_text(encoding="utf-8") == "keep"


def test_experiment_out_inside_its_corpus_is_refused(tmp_path, corpus, cli, ledger):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        "\n".join(
            [
                f"dataset = {json.dumps(str(FIXTURES / 'qa.jsonl'))}",
                f"corpus = {json.dumps(str(corpus))}",
                'metrics = ["answer_relevancy"]',
                "[grid]",
                'retrievers = ["dense"]',
                "[objective]",
                'maximize = "answer_relevancy"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    before = _snapshot(corpus)
    _refused(cli("experiment", spec, "--out", corpus / "runs", "-q"), ledger, "experiment --out")
    assert _snapshot(corpus) == before and not (corpus / "runs").exists()
