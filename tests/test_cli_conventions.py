"""CLI conventions: --version/-V, -h, python -m ragloop, stdin for ask and eval, --json,
exit codes (1 runtime, 2 usage, 3 nothing measured, 130 Ctrl-C with a partial summary)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragloop import __version__
from ragloop.cli import app
from ragloop.eval.metrics.context_llm import RECALL_PROMPT
from tests.fakes.fixtures import FAKE_KEY, openai_server  # noqa: F401
from tests.fakes.openai_server import hang, reply
from tests.test_cli_eval import ROWS, write_dataset

ROOT = Path(__file__).parent.parent


def _invoke(*args: str, **kwargs: Any) -> Any:
    return CliRunner().invoke(app, list(args), **kwargs)


def test_version_help_and_python_dash_m():
    for flag in ("--version", "-V"):
        out = _invoke(flag)
        assert out.exit_code == 0 and out.output.strip() == f"ragloop {__version__}"
    assert _invoke("-h").exit_code == 0 and "Exit codes" in _invoke("-h").output
    assert "--max-tokens" in _invoke("ask", "-h").output
    done = subprocess.run(
        [sys.executable, "-m", "ragloop", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"ragloop {__version__}"


def test_eval_reads_json_lines_from_stdin_and_prints_json():
    lines = "\n".join(json.dumps(r) for r in ROWS) + '\n{"user_input": "broken\n'
    out = _invoke(
        "eval", "-", "--metrics", "exact_match", "--no-cache", "-q", "--json", input=lines
    )
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["metrics"]["exact_match"]["measured"] == 3
    assert summary["bad_rows"]["rows"][0]["index"] == 3  # the broken line, reported


def test_exit_codes_usage_runtime_and_nothing_measured(tmp_path, monkeypatch):
    data = write_dataset(tmp_path / "qa.jsonl")
    assert _invoke("eval", str(data), "--metrics", "nope", "--no-cache").exit_code == 2
    assert _invoke("ask", "q", "--retriever", "colbert").exit_code == 2  # unknown name
    assert _invoke("ask", "q", "--llm", "gpt4").exit_code == 2  # not a spec
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert _invoke("ask", "q", "--llm", "openai:gpt-4o-mini").exit_code == 1  # runtime
    bad = tmp_path / "bad.jsonl"  # every row lacks what the metric needs
    bad.write_text('{"user_input": "q"}\n{"user_input": "r"}\n', encoding="utf-8")
    nothing = _invoke("eval", str(bad), "--metrics", "exact_match", "--no-cache", "-q")
    assert nothing.exit_code == 3, nothing.output
    assert _invoke("eval", "--no-such-flag").exit_code == 2  # typer's own usage error


def test_ask_stdin_without_input_is_a_usage_error():
    # CliRunner gives an empty, non-tty stdin: an empty question
    out = _invoke("ask", "-", input="")
    assert out.exit_code == 2 and "empty" in out.output


def test_ctrl_c_in_eval_stops_writes_what_it_has_and_prints_the_summary(
    tmp_path,
    openai_server,  # noqa: F811
):
    def attributions(body: dict[str, Any]) -> dict[str, Any]:
        assert body["messages"][0]["content"].startswith(RECALL_PROMPT.instruction)
        return {"classifications": [{"statement": "s", "reason": "r", "attributed": True}]}

    openai_server.script(reply(attributions))  # the first job finishes, the rest hang
    openai_server.default = hang()
    data = write_dataset(tmp_path / "qa.jsonl")
    env = {**os.environ, **openai_server.env(FAKE_KEY), "RAGLOOP_EMBEDDINGS": "wordllama"}
    args = [sys.executable, "-m", "ragloop", "eval", str(data), "--metrics", "context_recall"]
    args += ["--llm", "openai:fake", "--no-cache", "-q", "--concurrency", "1"]
    args += ["--out", str(tmp_path / "out")]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    proc = subprocess.Popen(args, env=env, cwd=tmp_path, **pipes)
    deadline = time.monotonic() + 120
    while openai_server.count() < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert openai_server.count() >= 2, proc.communicate()  # the second job is hanging
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "context_recall" in stdout and "1/4" in stdout  # the partial summary
    assert "interrupted" in stderr
    records = [json.loads(x) for x in (tmp_path / "out" / "rows.jsonl").read_text().splitlines()]
    reasons = [r["context_recall.reason"] or "" for r in records]
    assert records[0]["context_recall"] == 1.0
    assert any("interrupted" in r for r in reasons)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert any("interrupted: 1 of 3 jobs finished" in n for n in summary["notes"])


def _two_config_spec(folder: Path) -> Path:
    from tests.conftest import CORPUS, FIXTURES

    lines = [
        'name = "stop"',
        f"dataset = {json.dumps(str(FIXTURES / 'qa.jsonl'))}",
        f"corpus = {json.dumps(str(CORPUS))}",
        'metrics = ["answer_relevancy", "rouge_score"]',
        f"cache_dir = {json.dumps(str(folder / 'cache'))}",
        "[settings]",
        'web = "off"',
        "chunk_size = 400",
        "chunk_overlap = 50",
        "llm_max_tokens = 77",
        "[grid]",
        'retrievers = ["dense", "sparse"]',
        "max_iterations = [1]",
        "[objective]",
        'maximize = "answer_relevancy"',
    ]
    path = folder / "spec.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_stopped_experiment_compares_and_writes_the_finished_configurations(tmp_path):
    import threading

    from ragloop.experiments.experiment import run_experiment
    from ragloop.experiments.spec import load_spec

    spec = load_spec(_two_config_spec(tmp_path))
    assert spec.settings.llm_max_tokens == 77  # LLM knobs are settings a spec can hold
    stop = threading.Event()

    def progress(done: int, total: int, what: str) -> None:
        if what.endswith(": done"):  # the first configuration finished: Ctrl-C now
            stop.set()

    result = run_experiment(spec, out=tmp_path / "out", progress=progress, stop=stop)
    assert len(result.records) == 1 and result.chosen == result.records[0]["config"]
    assert any("interrupted: 1 of 2 configurations finished" in n for n in result.notes)
    assert (tmp_path / "out" / "results.csv").is_file()


def test_experiment_json_and_knob_flags(tmp_path):
    spec = _two_config_spec(tmp_path)
    out = _invoke("experiment", str(spec), "--out", str(tmp_path / "o"), "-q", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["configurations"]) == 2 and data["chosen"]
    bad = _invoke("experiment", str(spec), "-q", "--max-tokens", "0")
    assert bad.exit_code == 2 and "llm_max_tokens" in bad.output


def test_index_and_retrieve_print_json_and_take_registered_retrievers(tmp_path):
    from ragloop import register_retriever
    from ragloop.retrievers.registry import unregister_retriever
    from tests.conftest import CORPUS
    from tests.test_plugins import NoIdRetriever

    built = _invoke("index", str(CORPUS), "--out", str(tmp_path / "idx"), "--json")
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout)["files"] == 10
    # the answer's genre profile is chosen at index time and shown in the report
    assert json.loads(built.stdout)["answer_profile"]["name"] in ("reference", "guide", "generic")
    ranked = _invoke("retrieve", "valve", "--index", str(tmp_path / "idx"), "-k", "2", "--json")
    assert ranked.exit_code == 0, ranked.output
    assert [c["rank"] for c in json.loads(ranked.stdout)] == [1, 2]
    # no match is said in words, not shown as an empty table
    none = _invoke("retrieve", "zzqx wvvk", "--index", str(tmp_path / "idx"), "-r", "sparse")
    assert none.exit_code == 0 and "no chunk matched" in none.output, none.output
    assert _invoke("retrieve", "valve", "--index", str(tmp_path / "idx"), "-k", "0").exit_code == 2
    register_retriever("cli-noid", NoIdRetriever())
    try:
        mine = _invoke("retrieve", "valve", "--index", str(tmp_path / "idx"), "-r", "cli-noid")
        assert mine.exit_code == 0 and "valves.md#" in mine.output
    finally:
        unregister_retriever("cli-noid")
