"""``ragloop eval`` through typer's CliRunner: offline by default, files written, clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.eval.metrics.context_llm import RECALL_PROMPT
from tests.fakes.fixtures import FAKE_KEY, openai_server  # noqa: F401
from tests.fakes.openai_server import error, reply

ROWS = [
    {
        "question": "How do I reset the Tidy T2?",
        "answer": "Hold the power button for ten seconds.",
        "ground_truth": "Hold the power button for ten seconds to reset it.",
        "contexts": ["To reset a Tidy T2, hold the power button for ten seconds."],
    },
    {
        "user_input": "What does KX-217 mean?",
        "response": "The brush is stuck.",
        "reference": "KX-217 means the main brush is stuck.",
        "retrieved_contexts": ["KX-217: main brush stuck. Remove hair from the brush."],
    },
    {
        "user_input": "Is there a warranty?",
        "response": "Yes, two years.",
        "reference": "Two years of warranty.",
        "retrieved_contexts": ["The warranty lasts two years."],
    },
]


def write_dataset(path: Path) -> Path:
    lines = [json.dumps(r) for r in ROWS] + ['{"user_input": "broken']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["eval", *args])


def test_offline_eval_prints_a_summary_and_writes_the_files(tmp_path):
    data = write_dataset(tmp_path / "qa.jsonl")
    out = tmp_path / "out"
    result = run(str(data), "--out", str(out), "--cache-dir", str(tmp_path / "cache"))
    assert result.exit_code == 0, result.output
    text = result.output
    for name in (
        "offline_answer_relevancy",
        "offline_context_relevance",
        "offline_context_recall",
        "rouge_score",
    ):
        assert name in text
    assert "no --llm given" in text and "offline variants" in text
    assert "bad rows: 1" in text and "row 3:" in text and "3/4" in text
    records = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["offline_context_recall"]["measured"] == 3
    assert summary["bad_rows"]["rows"][0]["index"] == 3
    assert any("offline variants" in n for n in summary["notes"])


def test_named_metrics_and_quiet(tmp_path):
    data = write_dataset(tmp_path / "qa.jsonl")
    result = run(str(data), "--metrics", "exact_match, rouge_score", "--quiet", "--no-cache")
    assert result.exit_code == 0, result.output
    assert "exact_match" in result.output and "rouge_score" in result.output
    assert "offline_answer_relevancy" not in result.output


def test_unknown_metric_and_missing_file_exit_2(tmp_path):
    data = write_dataset(tmp_path / "qa.jsonl")
    unknown = run(str(data), "--metrics", "nope", "--no-cache")
    assert unknown.exit_code == 2 and "unknown metric 'nope'" in unknown.output
    missing = run(str(tmp_path / "absent.jsonl"), "--no-cache")
    assert missing.exit_code == 2 and "not found" in missing.output


def test_llm_eval_against_the_fake_server(tmp_path, monkeypatch, openai_server):  # noqa: F811
    def attributions(body: dict[str, Any]) -> dict[str, Any]:
        assert body["messages"][0]["content"].startswith(RECALL_PROMPT.instruction)
        return {"classifications": [{"statement": "s", "reason": "r", "attributed": True}]}

    openai_server.default = reply(attributions)
    for key, value in openai_server.env(FAKE_KEY).items():
        monkeypatch.setenv(key, value)
    data = write_dataset(tmp_path / "qa.jsonl")
    ok = run(str(data), "--metrics", "context_recall", "--llm", "openai:fake", "--no-cache", "-q")
    assert ok.exit_code == 0, ok.output
    assert "context_recall" in ok.output and "1.0000" in ok.output and "3/4" in ok.output
    assert openai_server.count() == 3

    openai_server.default = error(401, lambda body, headers: f"bad {headers['authorization']}")
    denied = run(
        str(data),
        "--metrics",
        "context_recall",
        "--llm",
        "openai:fake",
        "--no-cache",
        "-q",
        "--concurrency",
        "1",
        "--out",
        str(tmp_path / "denied"),
    )
    assert denied.exit_code == 1
    assert "authentication failed (HTTP 401)" in denied.output
    assert openai_server.count() == 4
    written = (tmp_path / "denied" / "summary.json").read_text()
    assert FAKE_KEY not in denied.output and FAKE_KEY not in written
