"""The Python API is held to the settings' validation; messages say what really happened."""

from __future__ import annotations

import pytest

from ragloop.config import Context, load_settings
from ragloop.errors import ConfigError
from ragloop.eval.schema import EvaluationDataset

BAD_OVERRIDES = {
    "retrievers None": {"retrievers": None},
    "retrievers empty": {"retrievers": []},
    "retrievers repeated": {"retrievers": ["dense", "dense"]},
    "correct_order unknown": {"correct_order": ["web", "rm -rf"]},
    "correct_order None": {"correct_order": None},
    "k true": {"k": True},
}


@pytest.mark.parametrize("what", sorted(BAD_OVERRIDES))
def test_run_overrides_are_validated_like_settings(what, fixture_index, wordllama, ledger):
    from ragloop.nodes.base import Deps
    from ragloop.nodes.offline import OfflineStrategies
    from ragloop.pipeline import Pipeline
    from ragloop.retrievers.registry import get_retriever

    retrievers = {n: get_retriever(n, fixture_index, k=3) for n in ("dense", "sparse")}
    pipe = Pipeline(
        Deps(strategies=OfflineStrategies(wordllama), retrievers=retrievers),
        Context(retrievers=("dense", "sparse")),
    )
    with pytest.raises(ConfigError) as caught:
        pipe.run("What equipment does room RM-12 have?", **BAD_OVERRIDES[what])
    name = next(iter(BAD_OVERRIDES[what]))
    ledger("python API: bad run overrides refused", 1)
    assert f"'{name}'" in str(caught.value)


@pytest.mark.parametrize("value", [True, False, [True]])
def test_true_is_no_number_for_a_setting(value, ledger):
    with pytest.raises(ConfigError, match="'k'"):
        load_settings(k=value)
    ledger("python API: bool for a numeric setting refused", 1)


def test_spec_grid_k_true_is_refused(tmp_path, ledger):
    from pathlib import Path

    from ragloop.experiments.spec import load_spec

    fixtures = Path(__file__).parent.parent / "fixtures"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'dataset = "{fixtures / "qa.jsonl"}"\ncorpus = "{fixtures / "corpus"}"\n'
        'metrics = ["answer_relevancy"]\n[grid]\nk = [true]\n'
        '[objective]\nmaximize = "answer_relevancy"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="k"):
        load_spec(spec)
    ledger("python API: spec k = [true] refused", 1)


def test_both_old_and_new_column_names_say_the_old_one_is_ignored(ledger):
    ds = EvaluationDataset.from_list(
        [{"question": "old", "user_input": "new", "response": "r", "answer": "a"}]
    )
    notes = " ".join(ds.notices)
    ok = ds.samples[0].user_input == "new" and "'question' ignored" in notes
    ok = ok and "renamed to 'user_input'" not in notes and "'answer' ignored" in notes
    ledger("messages: question + user_input says ignored", 1, int(not ok))
    assert ok, ds.notices
    renamed = EvaluationDataset.from_list([{"question": "old", "response": "r"}])
    assert "column 'question' renamed to 'user_input'" in renamed.notices


def test_an_unusable_working_folder_is_a_usage_error_naming_it(tmp_path, monkeypatch):
    """RAGLOOP_DATA_DIR under /proc (or a file, or a read-only place) exits 2 with the path and
    what to do; before, it was an "unexpected" FileNotFoundError with exit 1."""
    from typer.testing import CliRunner

    from ragloop.cli import app

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(blocker / "data"))
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nThe A widget turns left.\n")
    out = CliRunner().invoke(app, ["index", str(corpus), "--out", str(tmp_path / "idx")])
    assert out.exit_code == 2, out.output
    assert "unexpected" not in out.output
    assert "cannot use" in out.output and "RAGLOOP_DATA_DIR" in out.output
