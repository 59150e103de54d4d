"""Text from argv, stdin, files and the API is decoded one way: bad bytes replaced, said once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloop.safety.encoding import clean_text

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
#: what Python makes of the argv bytes b"room \xff\xfe RM-12" (surrogate escapes)
ARGV = b"room \xff\xfe RM-12".decode("utf-8", "surrogateescape")
STDIN = b"What does room \xff RM-12 have?\n"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    from ragloop.providers import get_embeddings
    from ragloop.retrievers.index import build_index

    out = tmp_path_factory.mktemp("enc") / "idx"
    build_index(CORPUS, get_embeddings("wordllama"), "wordllama", out)
    return out


@pytest.fixture
def cli(tmp_path, monkeypatch, index_dir):
    import ragloop.cli
    from ragloop.cli import app

    monkeypatch.setattr(ragloop.cli, "_REPLACED_SAID", set())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(index_dir))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    runner = CliRunner()
    return lambda *args, input=None: runner.invoke(app, [*args], input=input)


def _replaced_once(result, ledger, kind: str) -> None:
    out = " ".join(result.output.split())
    ok = result.exit_code == 0 and out.count("not UTF-8") == 1 and "unexpected" not in out
    ledger(f"encoding: {kind}", 1, int(not ok))
    assert ok, result.output


@pytest.mark.parametrize("command", ["retrieve", "ask"])
def test_argv_question_with_invalid_bytes(command, cli, ledger):
    _replaced_once(cli(command, ARGV), ledger, f"{command} argv")


@pytest.mark.parametrize("command", ["retrieve", "ask"])
def test_stdin_question_with_invalid_bytes(command, cli, ledger):
    _replaced_once(cli(command, "-", input=STDIN), ledger, f"{command} stdin")


def test_eval_stdin_with_invalid_bytes_scores_the_row(cli, ledger):
    row = {"user_input": "room RM-12", "response": "RM-12 seats 8", "reference": "RM-12 seats 8"}
    raw = json.dumps(row).encode().replace(b"room", b"room \xff") + b"\n"
    result = cli("eval", "-", "-m", "exact_match", "-q", input=raw)
    ledger("encoding: eval stdin", 1, int(result.exit_code != 0))
    assert result.exit_code == 0, result.output


def test_chat_line_with_invalid_bytes(cli, ledger):
    result = cli("chat", "--thread", "enc", input=STDIN + b"quit\n")
    _replaced_once(result, ledger, "chat stdin")


def test_lone_surrogates_from_json_or_the_api_never_crash(ledger):
    """A JSON ``\\ud800`` (the server, a dataset) reaches the model as U+FFFD."""
    from ragloop.providers import get_embeddings

    question = json.loads('"room \\ud800 RM-12"')
    assert clean_text(question) == ("room \ufffd\ufffd\ufffd RM-12", True)
    assert clean_text("plain é") == ("plain é", False)
    vec = get_embeddings("wordllama").embed_query(question)
    ledger("encoding: API surrogates", 1, int(not any(vec)))
    assert any(vec)
