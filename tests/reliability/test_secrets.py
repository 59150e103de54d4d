"""Secret canaries through every command, against the local fake OpenAI server.

The key is a value no key pattern knows (so only the "secret environment values" pass can
catch it); the server echoes it in 401 messages and in its replies. Afterwards every byte
ragloop wrote under the temp folders, and everything it printed, is searched for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, error, reply

CANARY = "canary7Q2x9ZtL4mVb8KpW"
CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"


def _echo_key(body: dict, headers: dict) -> str:
    return f"Incorrect API key provided: {headers.get('authorization', '')}"


def _reply_with_key(body: dict) -> str:
    return f"Here is what I know [1]. Your key {CANARY} works."


@pytest.fixture
def env(tmp_path, monkeypatch):
    server = FakeOpenAIServer().start()
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    monkeypatch.setenv("RAGLOOP_LLM_MAX_RETRIES", "0")
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    yield server
    server.stop()


def _dataset(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    rows = [
        {"user_input": "How much is a late fee?", "response": "10 cents a day.", "reference": "r"},
        {"user_input": "When is the library open?", "response": "From 9.", "reference": "r"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _spec(tmp_path: Path, dataset: Path) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        "\n".join(
            [
                'name = "canary"',
                f"dataset = {json.dumps(str(dataset))}",
                f"corpus = {json.dumps(str(CORPUS))}",
                'llm = "openai:fake-model"',
                'metrics = ["answer_relevancy"]',
                "bootstrap = 100",
                "[settings]",
                'web = "off"',
                "[grid]",
                'retrievers = ["dense"]',
                "max_iterations = [1]",
                "[objective]",
                'maximize = "answer_relevancy"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return spec


def _commands(tmp_path: Path, dataset: Path, spec: Path) -> list[tuple[list[str], str | None]]:
    llm = ["--llm", "openai:fake-model"]
    corpus = ["--corpus", str(CORPUS)]
    return [
        (["index", str(CORPUS)], None),
        (["ask", "How much is a late fee?", *llm, *corpus], None),
        (["ask", "How much is a late fee?", *llm, *corpus, "--json"], None),
        (["chat", "--thread", "t1", *llm, *corpus], "How much is a late fee?\n/trace\n/quit\n"),
        (["eval", str(dataset), *llm, "--out", str(tmp_path / "eval"), "-q"], None),
        (["eval", str(dataset), *llm, "--out", str(tmp_path / "eval"), "-q", "--no-cache"], None),
        (["experiment", str(spec), "--out", str(tmp_path / "exp"), "-q"], None),
        (["eval-traces", str(tmp_path / "data" / "traces.sqlite"), "--json"], None),
    ]


def _written_bytes(root: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def test_no_command_writes_or_prints_the_key(tmp_path, env, ledger):
    from ragloop.cli import app

    dataset = _dataset(tmp_path)
    spec = _spec(tmp_path, dataset)
    runner = CliRunner()
    printed, attempts = [], 0
    for behaviour in (reply(_reply_with_key), error(401, message=_echo_key)):
        env.default = behaviour
        for args, stdin in _commands(tmp_path, dataset, spec):
            result = runner.invoke(app, args, input=stdin)
            attempts += 1
            printed.append((args[0], result.output))
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                args,
                result.exception,
            )
            # (the fake server's own thread may print a traceback of a dropped connection)
            assert "/ragloop/" not in result.output.replace(str(tmp_path), ""), result.output
    assert env.count() > 0  # the commands did talk to the server
    leaks = [str(p) for p, data in _written_bytes(tmp_path) if CANARY.encode() in data]
    leaks += [f"output of {cmd}" for cmd, text in printed if CANARY in text]
    ledger("secret canaries: commands x server behaviours", attempts, len(leaks))
    assert leaks == []


def test_ask_with_a_401_ends_in_one_line_on_real_stderr(tmp_path, env, ledger):
    env.default = error(401, message=_echo_key)
    cmd = [
        str(Path(sys.executable).with_name("ragloop")),
        "ask",
        "How much is a late fee?",
        "--llm",
        "openai:fake-model",
        "--corpus",
        str(CORPUS),
    ]
    wide = dict(os.environ, COLUMNS="400")  # rich wraps at the terminal width otherwise
    done = subprocess.run(cmd, env=wide, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    leaked = CANARY in done.stderr + done.stdout
    ledger("secret canaries: ask stderr (subprocess)", 1, int(leaked or len(errors) != 1))
    assert done.returncode == 1, done.stderr
    assert not leaked and "Traceback" not in done.stderr
    assert len(errors) == 1 and env.url.split("/v1")[0] in errors[0]
    assert "authentication failed" in errors[0] and "OPENAI_API_KEY" in errors[0]
