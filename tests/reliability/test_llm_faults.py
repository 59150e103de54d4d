"""LLM faults in ask and chat: retried with the runner's policy, then one line naming the server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.openai_server import Behaviour, FakeOpenAIServer, error, hang

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
FAULTS = {
    "429 rate limited": (error(429), "rate limit"),
    "500 server error": (error(500), "server error"),
    "truncated body": (Behaviour(raw=b'{"id": "x", "choices": [{"mess'), "failed"),
    "hang past the timeout": (hang(30), "timeout"),
    "401 bad key": (error(401), "authentication failed"),
    "2 MB reply": (Behaviour(reply="x" * 2_000_000), "reply cap"),
}
#: not sent again: a bad key, a body that cannot be read, a flood; and a timeout, since the
#: server on 127.0.0.1 takes the local profile (it is still busy with the abandoned request)
FINAL = ("401 bad key", "truncated body", "2 MB reply", "hang past the timeout")


@pytest.fixture
def env(tmp_path, monkeypatch):
    server = FakeOpenAIServer().start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    monkeypatch.setenv("RAGLOOP_LLM_MAX_RETRIES", "1")
    monkeypatch.setenv("RAGLOOP_LLM_TIMEOUT", "1")
    yield server
    server.stop()


def _one_error_line(output: str) -> str:
    flat = " ".join(output.split())
    assert flat.count("error:") == 1 and "Traceback" not in output, output
    return flat[flat.index("error:") :]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_ask_ends_in_one_line_naming_the_server(env, fault, ledger):
    from ragloop.cli import app

    env.default, words = FAULTS[fault]
    args = ["ask", "How much is a late fee?", "--llm", "openai:fake-model", "--corpus", CORPUS]
    result = CliRunner().invoke(app, [str(a) for a in args])
    line = _one_error_line(result.output)
    ok = result.exit_code == 1 and env.url in line and words in line.lower()
    ledger("LLM faults: ask", 1, int(not ok))
    assert ok, line
    assert env.count() == (1 if fault in FINAL else 2)  # the runner's policy: 1 retry here
    assert "x" * 100 not in result.output


def test_chat_keeps_going_after_a_fault_and_names_the_server(env, ledger):
    from ragloop.cli import app

    env.default = error(500)
    args = ["chat", "--llm", "openai:fake-model", "--corpus", str(CORPUS)]
    result = CliRunner().invoke(app, args, input="How much is a late fee?\n/quit\n")
    line = _one_error_line(result.output)
    ledger("LLM faults: chat", 1, int(result.exit_code != 0))
    assert result.exit_code == 0 and env.url in line and "server error" in line


def test_refused_connections_are_not_llm_calls(tmp_path, ledger):
    from ragloop.eval.runner import evaluate
    from ragloop.providers import get_chat_model

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        "OPENAI_API_KEY": "sk-test-refused-0000",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
    }
    llm = get_chat_model("openai:fake-model", env=env)
    rows = [{"user_input": "q", "response": "a", "retrieved_contexts": ["c"]}]
    result = evaluate(rows, ["faithfulness"], llm, cache=False, max_retries=2)
    ledger("LLM faults: refused connection counted as a call", 1, result.totals["llm_calls"])
    assert result.totals["llm_calls"] == 0
    assert "connection" in (result.rows[0].reasons["faithfulness"] or "")
