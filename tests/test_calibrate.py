"""`ragloop calibrate INDEX` as a user meets it: the fit kept with the index, used by the
answer, named by the index report and the pipeline, refused when it does not apply."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.config import load_settings
from ragloop.data import KB_DIR
from ragloop.errors import ConfigError
from ragloop.nodes.answer_model import INDEX_MODEL, from_dict, load_model, model_for_index
from ragloop.pipeline import build_pipeline
from ragloop.retrievers.index import read_manifest

runner = CliRunner()


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """The demo base indexed with WordLlama and calibrated on 80 generated questions."""
    root = tmp_path_factory.mktemp("calib")
    corpus = root / "kb"
    shutil.copytree(KB_DIR, corpus)
    idx = root / "idx"
    env = {"RAGLOOP_DATA_DIR": str(root / "data"), "RAGLOOP_EMBEDDINGS": "wordllama"}
    built = runner.invoke(app, ["index", str(corpus), "--out", str(idx)], env=env)
    assert built.exit_code == 0, built.output
    dry = runner.invoke(app, ["calibrate", str(idx), "--dry-run", "--json"], env=env)
    assert dry.exit_code == 0, dry.output
    assert not (idx / INDEX_MODEL).exists()  # a dry run writes nothing
    done = runner.invoke(app, ["calibrate", str(idx), "-n", "80", "--use", "--json"], env=env)
    assert done.exit_code == 0, done.output
    return idx, env, json.loads(dry.stdout), json.loads(done.stdout)


def test_dry_run_says_what_it_would_do(calibrated):
    idx, _, dry, _ = calibrated
    assert dry["dry_run"] is True and dry["index"] == str(idx)
    assert dry["embeddings_model"] == read_manifest(idx)["embeddings_model"]
    # without --use the fit is kept as a candidate the answer never reads
    assert dry["use"] is False
    assert dry["writes"] == [
        str(idx / "answer_model.candidate.json"),
        str(idx / "calibration_rows.csv.gz"),
    ]
    assert dry["answer_model_in_use"].startswith("shipped fit")  # answer_model.wordllama.json


def test_the_model_file_records_its_provenance(calibrated):
    idx, _, _, report = calibrated
    data = json.loads((idx / INDEX_MODEL).read_text())
    model = from_dict(data)
    p = model.provenance
    rows = (idx / "calibration_rows.csv.gz").read_bytes()
    assert p["sha256"] == hashlib.sha256(rows).hexdigest()
    assert p["embeddings_model"] == read_manifest(idx)["embeddings_model"]
    assert p["seed"] == 0 and "30% held out" in p["split"] and p["ragloop_version"]
    assert p["rows"] == report["rows"] > 0 and p["questions"] == report["questions_with_rows"]
    assert p["train_rows"] > 0 and p["held_out_rows"] > 0
    held = p["held_out"]["best_sentence_holds_gold"]
    # scored against the shipped fit for these embeddings (WordLlama's)
    assert set(held) == {"model", "shipped"} and all(0 <= v <= 1 for v in held.values())
    assert p["testset"]["kinds"]["unanswerable"] > 0
    assert 0 < model.floor_share <= 1 and 0 <= model.not_found_below < 0.3
    # "not found" is the shipped fit's question-level abstention (generated questions do not
    # separate the answerable from the unanswerable), so a calibrated index keeps abstaining
    shipped = load_model(embeddings_model=p["embeddings_model"])
    assert shipped is not None and model.abstain == shipped.abstain and model.abstain
    assert p["abstention"] == "the shipped fit's"


def test_the_answer_uses_the_index_calibration(calibrated):
    idx, env, _, _ = calibrated
    settings = load_settings(index_dir=idx, embeddings="wordllama", web="off")
    pipe = build_pipeline(settings, env={})
    assert pipe.sources["answer model"].startswith("calibrated on this corpus")
    own = from_dict(json.loads((idx / INDEX_MODEL).read_text()))
    assert pipe.deps.answerer.answer_model.coef == own.coef
    # no override: the index model's own not-found level decides (``extractive.extract``)
    assert pipe.deps.answerer.not_found_below is None
    shown = runner.invoke(app, ["calibrate", str(idx), "--dry-run"], env=env)
    assert "calibrated on this corpus" in shown.output


def test_without_use_the_fit_is_a_candidate_the_answer_does_not_read(calibrated, tmp_path):
    idx, env, _, _ = calibrated
    other = tmp_path / "idx"
    shutil.copytree(idx, other)
    (other / INDEX_MODEL).unlink()
    out = runner.invoke(app, ["calibrate", str(other), "-n", "60"], env=env)
    assert out.exit_code == 0, out.output
    assert "kept as a candidate" in out.output and "--use" in out.output
    assert from_dict(json.loads((other / "answer_model.candidate.json").read_text()))
    assert not (other / INDEX_MODEL).exists()
    settings = load_settings(index_dir=other, embeddings="wordllama", web="off")
    assert build_pipeline(settings, env={}).sources["answer model"].startswith("shipped fit")


def test_a_rebuild_with_the_same_embeddings_keeps_it_and_the_report_says_so(calibrated):
    idx, env, _, _ = calibrated
    before = (idx / INDEX_MODEL).read_bytes()
    corpus = read_manifest(idx)["corpus_dir"]
    again = runner.invoke(app, ["index", corpus, "--out", str(idx), "--json"], env=env)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["answer_model"].startswith("calibrated on this corpus")
    assert (idx / INDEX_MODEL).read_bytes() == before


def test_a_calibration_for_other_embeddings_is_not_used(calibrated, tmp_path):
    idx, _, _, _ = calibrated
    other = tmp_path / "idx"
    shutil.copytree(idx, other)
    data = json.loads((other / INDEX_MODEL).read_text())
    data["provenance"]["embeddings_model"] = "someone-else:768"
    (other / INDEX_MODEL).write_text(json.dumps(data))
    model, why = model_for_index(other, read_manifest(idx)["embeddings_model"])
    assert model == load_model(embeddings_model=read_manifest(idx)["embeddings_model"])
    assert why.startswith("shipped fit") and "fitted with embeddings someone-else:768" in why


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "pickle", "coef": {}, "intercept": 0},
        {"kind": "logistic", "coef": {"__import__('os')": 1.0}, "intercept": 0},
        {"kind": "logistic", "coef": {"cosine": "1e3"}, "intercept": 0},
        {"kind": "logistic", "coef": {"cosine": 1.0}, "intercept": 0, "floor_share": 2},
        {"kind": "logistic", "coef": {"cosine": 1.0}, "intercept": 0, "provenance": [1]},
    ],
)
def test_a_bad_model_file_is_a_clear_error_never_code(calibrated, tmp_path, bad):
    idx, _, _, _ = calibrated
    other = tmp_path / "idx"
    shutil.copytree(idx, other)
    (other / INDEX_MODEL).write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="answer model"):
        model_for_index(other, read_manifest(idx)["embeddings_model"])


def test_clear_errors(tmp_path, calibrated):
    idx, env, _, _ = calibrated
    missing = runner.invoke(app, ["calibrate", str(tmp_path / "nothing")], env=env)
    assert missing.exit_code == 1 and "no index at" in missing.output
    few = runner.invoke(app, ["calibrate", str(idx), "-n", "10"], env=env)
    assert few.exit_code == 2 and "too few" in few.output


def test_too_few_labelled_questions_write_nothing(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for n in range(3):
        (corpus / f"p{n}.md").write_text(f"# Pump P-{n}\n\nThe P-{n} pump moves {n} litres.\n")
    env = {"RAGLOOP_DATA_DIR": str(tmp_path / "data"), "RAGLOOP_EMBEDDINGS": "wordllama"}
    idx = tmp_path / "idx"
    assert runner.invoke(app, ["index", str(corpus), "--out", str(idx)], env=env).exit_code == 0
    out = runner.invoke(app, ["calibrate", str(idx), "-n", "40"], env=env)
    assert out.exit_code == 2 and "training question(s)" in out.output, out.output
    assert not (idx / INDEX_MODEL).exists()


def test_the_judge_stops_at_the_fitted_level(calibrated, tmp_path):
    idx, _, _, _ = calibrated
    other = tmp_path / "idx"
    shutil.copytree(idx, other)
    data = json.loads((other / INDEX_MODEL).read_text())
    settings = load_settings(index_dir=other, embeddings="wordllama", web="off")
    for level, shown in ((0.77, "0.77 (fitted)"), (None, "0.98 (hand-set)")):
        data.pop("stop_level", None)
        data.update({"stop_level": level} if level else {})
        (other / INDEX_MODEL).write_text(json.dumps(data))
        pipe = build_pipeline(settings, env={})
        assert pipe.deps.judge.calibration.grade2 == (level or 0.98)
        assert pipe.sources["judge stop level"] == shown


def test_a_fit_worse_than_the_model_in_use_is_named_with_both_scores():
    from ragloop.calibration.corpus import worse_than_baseline

    lost = {"best_sentence_holds_gold": {"model": 0.524, "shipped": 0.571}}
    assert "0.524 < 0.571" in worse_than_baseline(lost) and "shipped" in worse_than_baseline(lost)
    assert worse_than_baseline({"best_sentence_holds_gold": {"model": 0.6, "shipped": 0.6}}) == ""
    assert worse_than_baseline({"best_sentence_holds_gold": {"model": None, "shipped": 0.6}}) == ""
    assert worse_than_baseline({}) == ""


def test_use_keeps_a_losing_fit_as_a_candidate_unless_forced(calibrated, tmp_path, monkeypatch):
    import ragloop.calibration.corpus as corpus

    idx, env, _, _ = calibrated
    other = tmp_path / "idx"
    shutil.copytree(idx, other)
    before = (other / INDEX_MODEL).read_bytes()
    (other / "answer_model.candidate.json").unlink(missing_ok=True)
    monkeypatch.setattr(corpus, "worse_than_baseline", lambda scores: "it lost (0.5 < 0.6)")
    out = runner.invoke(app, ["calibrate", str(other), "-n", "80", "--use", "--json"], env=env)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["used"] is False and report["not_used"] == "it lost (0.5 < 0.6)"
    assert report["model"] == str(other / "answer_model.candidate.json")
    assert (other / INDEX_MODEL).read_bytes() == before  # the model in use is left as it was
    assert (other / "answer_model.candidate.json").exists()
    shown = runner.invoke(app, ["calibrate", str(other), "-n", "80", "--use"], env=env)
    assert "not used, kept as a candidate: it lost" in " ".join(shown.output.split())
    forced = runner.invoke(
        app, ["calibrate", str(other), "-n", "80", "--use", "--force", "--json"], env=env
    )
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.stdout)["used"] is True
    assert (other / INDEX_MODEL).read_bytes() != before
