"""``ragloop eval`` must measure something or say so: --run, --limit, LLM-only names, exit 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.cli.eval import NOTHING_MEASURED
from ragloop.cli.eval_run import first_rows, split_llm_only
from ragloop.eval.schema import EvaluationDataset

QUESTIONS = [
    {
        "user_input": "How long does an interlibrary loan take?",
        "reference": "An interlibrary loan usually arrives within two weeks.",
    },
    {
        "user_input": "What does the Maker Lab offer?",
        "reference": "The Maker Lab has 3D printers and a laser cutter.",
    },
    {
        "user_input": "Which branch is open on Sundays?",
        "reference": "The Central Library opens on Sundays.",
    },
]
ANSWERED = [
    {
        "user_input": "Is there a warranty?",
        "response": "Yes, two years.",
        "reference": "Two years of warranty.",
        "retrieved_contexts": ["The warranty lasts two years."],
    }
]


def write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["eval", *args])


def test_rows_without_a_response_measure_nothing_and_exit_3_with_a_hint(tmp_path):
    data = write(tmp_path / "qa.jsonl", QUESTIONS)
    result = run(data, "--metrics", "answer_relevancy,bleu_score", "--no-cache", "-q")
    assert result.exit_code == NOTHING_MEASURED == 3, result.output
    assert "0/3" in result.output
    assert "add --run" in result.output
    assert "nothing measured" in result.output


def test_run_answers_the_rows_first_and_then_measures_them(tmp_path, wordllama):
    from ragloop.config import load_settings
    from ragloop.retrievers.index import build_index
    from tests.conftest import CORPUS

    chunks = load_settings()
    index = build_index(
        CORPUS,
        wordllama,
        "wordllama",
        tmp_path / "idx",
        chunk_size=chunks.chunk_size,
        chunk_overlap=chunks.chunk_overlap,
    )
    data = write(tmp_path / "qa.jsonl", QUESTIONS)
    out = tmp_path / "out"
    where = str(tmp_path / "idx")
    assert index.manifest["chunks"] > 0
    args = [data, "--run", "--index", where, "--no-cache", "-q", "--out", str(out)]
    result = run(*args, "--metrics", "answer_relevancy,bleu_score")
    assert result.exit_code == 0, result.output
    assert "the pipeline answered 3 of 3 row(s)" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["bleu_score"]["measured"] == 3
    assert summary["metrics"]["offline_answer_relevancy"]["measured"] == 3
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert all(isinstance(r["bleu_score"], float) for r in rows)
    answered = [json.loads(line) for line in (out / "answered.jsonl").read_text().splitlines()]
    assert [a["user_input"] for a in answered] == [q["user_input"] for q in QUESTIONS]
    assert all(a["response"] and a["reference"] for a in answered)
    again = run(str(out / "answered.jsonl"), "--metrics", "bleu_score", "--no-cache", "-q")
    assert again.exit_code == 0 and "3/3" in again.output, again.output


def test_limit_keeps_the_first_rows_of_the_file(tmp_path):
    data = write(tmp_path / "qa.jsonl", ANSWERED * 5)
    result = run(data, "--metrics", "exact_match", "--limit", "2", "--no-cache", "-q")
    assert result.exit_code == 0, result.output
    assert "2/2" in result.output
    ds = EvaluationDataset.from_list([*ANSWERED, {"user_input": 3}, *ANSWERED])
    cut = first_rows(ds, 2)
    assert cut.total_rows == 2 and cut.indices == [0] and [e.index for e in cut.errors] == [1]


def test_llm_only_metrics_without_llm_are_skipped_with_a_note(tmp_path):
    data = write(tmp_path / "qa.jsonl", ANSWERED)
    result = run(data, "--metrics", "faithfulness,context_recall,bleu_score", "--no-cache", "-q")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "faithfulness skipped: it needs an LLM judge" in text
    assert "offline_context_recall" in text and "bleu_score" in text
    assert "context_recall ran as offline_context_recall" in text


def test_only_llm_only_metrics_without_llm_measure_nothing(tmp_path):
    data = write(tmp_path / "qa.jsonl", ANSWERED)
    result = run(data, "--metrics", "faithfulness,nv_accuracy", "--no-cache", "-q")
    assert result.exit_code == NOTHING_MEASURED, result.output
    assert "faithfulness skipped" in result.output and "nv_accuracy skipped" in result.output


def test_split_llm_only_keeps_variants_unknown_names_and_everything_with_an_llm():
    keep, notes = split_llm_only(["answer_relevancy", "faithfulness", "nope", "rouge_score"], False)
    assert keep == ["answer_relevancy", "nope", "rouge_score"]
    assert len(notes) == 1 and notes[0].startswith("faithfulness skipped")
    assert split_llm_only(["faithfulness"], True) == (["faithfulness"], [])
