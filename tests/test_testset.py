"""Offline test-set generation on the fixture corpus: kinds, verbatim passages, seed, CLI."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.errors import ConfigError
from ragloop.eval.schema import EvaluationDataset, SingleTurnSample
from ragloop.retrievers.corpus import load_corpus
from ragloop.testset import KINDS, generate, quotas, write_rows
from ragloop.testset.passages import balanced_order, load_passages
from tests.conftest import CORPUS


@pytest.fixture(scope="module")
def testset():
    return generate(CORPUS, 24, seed=3)


@pytest.fixture(scope="module")
def chunks():
    return {c.metadata["id"]: c.page_content for c in load_corpus(CORPUS).chunks}


def test_every_kind_is_present_and_tagged(testset):
    kinds = {r["kind"] for r in testset.rows}
    assert kinds == set(KINDS.values())
    for row in testset.rows:
        assert KINDS[row["synthesizer_name"]] == row["kind"]
        assert row["query_style"] in {"PERFECT_GRAMMAR", "WEB_SEARCH_LIKE", "MISSPELLED"}
        assert row["query_length"] in {"short", "medium", "long"}
    assert len(testset.rows) == 24
    assert sum(testset.kinds.values()) == 24


def test_reference_contexts_are_verbatim_chunks_and_ids_resolve(testset, chunks):
    for row in testset.rows:
        assert len(row["reference_contexts"]) == len(row["reference_context_ids"])
        for cid, text in zip(row["reference_context_ids"], row["reference_contexts"], strict=True):
            assert chunks[cid] == text
        assert row["reference_doc_ids"] == sorted(
            {i.split("#")[0] for i in row["reference_context_ids"]}
        )
        if row["kind"] == "multi_passage":
            assert len(set(row["reference_context_ids"])) == 2
        elif row["kind"] == "abstract":
            assert 2 <= len(set(row["reference_context_ids"])) <= 3
        elif row["kind"] != "unanswerable":
            assert len(row["reference_context_ids"]) == 1


def test_answerable_references_come_from_their_passages(testset):
    for row in testset.rows:
        if row["kind"] in ("specific", "paraphrased"):
            body = " ".join(row["reference_contexts"][0].split())
            sentence = row["reference"].split(": ", 1)[-1] if row["kind"] == "paraphrased" else ""
            assert (sentence or row["reference"]).split(". ")[0] in body


def test_unanswerable_key_terms_are_absent_from_the_corpus(testset, chunks):
    rows = [r for r in testset.rows if r["kind"] == "unanswerable"]
    assert rows
    text = " ".join(" ".join(c.lower().split()) for c in chunks.values())
    for row in rows:
        assert row["reference_contexts"] == [] and row["absent_terms"]
        for term in row["absent_terms"]:
            assert not re.search(rf"\b{re.escape(term)}\b", text), term
        assert row["reference"].startswith("The documents do not say")
        assert row["near_miss_of"]  # built beside a real subject of the corpus


def test_seed_reproduces_and_another_seed_differs(testset):
    again = generate(CORPUS, 24, seed=3)
    assert again.rows == testset.rows
    other = generate(CORPUS, 24, seed=4)
    assert [r["user_input"] for r in other.rows] != [r["user_input"] for r in testset.rows]


def test_questions_are_not_near_duplicates(testset):
    from rapidfuzz import fuzz

    questions = [r["user_input"].lower() for r in testset.rows]
    for i, q in enumerate(questions):
        for other in questions[i + 1 :]:
            assert fuzz.ratio(q, other) < 90


def test_sampling_is_balanced_across_documents():
    passages, _ = load_passages(CORPUS)
    import random

    order = balanced_order(list(passages), random.Random(0))
    sources = {p.source for p in passages}
    assert {p.source for p in order[: len(sources)]} == sources
    assert sorted(p.id for p in order) == sorted(p.id for p in passages)


def test_quotas_add_up_and_reject_bad_mix():
    assert sum(quotas(7, {k: 1 for k in KINDS}).values()) == 7
    with pytest.raises(ConfigError):
        quotas(5, {"nonsense": 1.0})


def test_a_kind_the_corpus_cannot_fill_is_said(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Alpha\n\nAlpha is a tool that sorts index cards quickly.\n")
    ts = generate(corpus, 10, seed=0)
    assert ts.notes  # one passage cannot give ten distinct questions
    assert sum(ts.kinds.values()) == len(ts.rows) < 10


def test_rows_load_as_an_evaluation_dataset(testset, tmp_path):
    path = write_rows(testset.rows, tmp_path / "qa.jsonl")
    ds = EvaluationDataset.load(path)
    assert len(ds.samples) == len(testset.rows) and not ds.errors
    first = ds.samples[0]
    assert isinstance(first, SingleTurnSample)
    assert first.reference_context_ids == testset.rows[0]["reference_context_ids"]
    assert first.query_style == testset.rows[0]["query_style"]


def test_write_refuses_an_existing_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text("mine\n")
    with pytest.raises(ConfigError, match="--force"):
        write_rows([{"user_input": "q"}], path)
    assert path.read_text() == "mine\n"
    write_rows([{"user_input": "q"}], path, force=True)
    assert json.loads(path.read_text()) == {"user_input": "q"}


def test_cli_writes_the_set_and_keeps_an_existing_file(tmp_path):
    out = tmp_path / "qa.jsonl"
    runner = CliRunner()
    args = ["testset", str(CORPUS), "--size", "12", "--out", str(out), "--seed", "1", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary["rows"] == len(rows) == 12
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "--force" in again.output
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows


def test_cli_reads_an_index_folder(fixture_index, tmp_path):
    folder = tmp_path / "idx"
    from ragloop.retrievers.index import save_index

    save_index(fixture_index, folder)
    ts = generate(folder, 6, seed=0)
    ids = {c.metadata["id"] for c in fixture_index.chunks}
    assert all(cid in ids for r in ts.rows for cid in r["reference_context_ids"])


def test_experiment_spec_generates_and_caches_a_testset(tmp_path):
    from ragloop.experiments.spec import load_spec

    spec = tmp_path / "spec.toml"
    spec.write_text(
        "\n".join(
            [
                'dataset = "testset:8"',
                f"corpus = {json.dumps(str(CORPUS))}",
                f"cache_dir = {json.dumps(str(tmp_path / 'cache'))}",
                'metrics = ["rouge_score"]',
                "seed = 2",
                "[settings]",
                "chunk_size = 400",
                "chunk_overlap = 50",
                "[objective]",
                'maximize = "rouge_score"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    loaded = load_spec(spec)
    assert loaded.dataset_path.parent == tmp_path / "cache" / "testsets"
    assert len(loaded.dataset.samples) == 8
    expected = generate(CORPUS, 8, seed=2, chunk_size=400, chunk_overlap=50)
    assert [s.user_input for s in loaded.dataset.samples] == [
        r["user_input"] for r in expected.rows
    ]
    ids = {c.metadata["id"] for c in load_corpus(CORPUS, chunk_size=400, chunk_overlap=50).chunks}
    assert all(i in ids for s in loaded.dataset.samples for i in s.reference_context_ids or [])
    stamp = loaded.dataset_path.stat().st_mtime_ns
    assert load_spec(spec).dataset_path.stat().st_mtime_ns == stamp  # reused, not made again


def test_experiment_spec_rejects_a_bad_testset_size(tmp_path):
    from ragloop.experiments.spec import load_spec

    spec = tmp_path / "spec.toml"
    spec.write_text('dataset = "testset:many"\nmetrics = ["rouge_score"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="testset:N"):
        load_spec(spec)


def test_cli_exits_3_and_writes_nothing_when_no_question_can_be_made(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    words = "Founded. Licence. Gpu. Mobile app. Enterprise. Reviews. Award. Kubernetes. Carbon."
    (corpus / "a.md").write_text(f"# A\n\n{words} Retired.\n")
    out = tmp_path / "qa.jsonl"
    result = CliRunner().invoke(app, ["testset", str(corpus), "--size", "4", "--out", str(out)])
    assert result.exit_code == 3, result.output
    assert "no question could be made" in result.output and not out.exists()
