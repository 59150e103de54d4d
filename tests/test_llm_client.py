"""The LLM client against local servers: the reply cap reaches them and binds the client."""

from __future__ import annotations

import pytest

from ragloop.errors import LLMError
from ragloop.llm.faults import with_llm_retries
from ragloop.llm.profile import PROFILES, is_local_url, resolve, structured_method
from ragloop.llm.reply_cap import TRUNCATED_KEY, body_cap
from ragloop.llm.retry import classify
from tests.fakes.fixtures import fake_chat_model
from tests.fakes.openai_server import endless, hang, reply


def test_a_local_server_is_sent_max_tokens_not_max_completion_tokens(openai_server):
    fake_chat_model(openai_server, max_tokens=50).invoke("hi")
    body = openai_server.chat_requests()[0].body
    assert body["max_tokens"] == 50 and "max_completion_tokens" not in body


def test_openai_itself_is_sent_max_completion_tokens():
    from ragloop.providers import get_chat_model

    model = get_chat_model("openai:gpt-4o-mini", env={"OPENAI_API_KEY": "sk-x"}, max_tokens=50)
    payload = model._get_request_payload("hi")
    assert payload["max_completion_tokens"] == 50 and "max_tokens" not in payload


def test_a_long_reply_is_cut_to_the_cap_and_the_cut_recorded(openai_server):
    openai_server.script(reply("word " * 400))  # 2,000 characters for a 10-token cap
    message = fake_chat_model(openai_server, max_tokens=10).invoke("hi")
    assert len(message.content) == 80
    assert message.response_metadata[TRUNCATED_KEY] == 2000


@pytest.mark.parametrize("flood", ["2 MB reply", "endless body"])
def test_a_flood_is_cut_off_not_retried_and_named(openai_server, flood):
    openai_server.default = reply("x" * 2_000_000) if flood == "2 MB reply" else endless()
    model = with_llm_retries(fake_chat_model(openai_server, max_tokens=64, timeout=20), 3)
    with pytest.raises(LLMError) as raised:
        model.invoke("hi")
    assert "reply cap" in str(raised.value) and openai_server.url in str(raised.value)
    assert openai_server.count() == 1  # the same server would flood again: no retry
    assert "x" * 100 not in str(raised.value)


def test_the_flood_error_is_classified_oversized(openai_server):
    openai_server.default = reply("x" * (body_cap(16) + 10))
    with pytest.raises(Exception) as raised:
        fake_chat_model(openai_server, max_tokens=16).invoke("hi")
    failure = classify(raised.value)
    assert failure.kind == "oversized" and not failure.retryable


def test_the_local_profile_does_not_retry_a_timeout(openai_server):
    openai_server.default = hang(30)
    local = PROFILES["local"]
    model = with_llm_retries(
        fake_chat_model(openai_server, timeout=0.5), 3, retry_timeouts=local.retry_timeouts
    )
    with pytest.raises(LLMError, match="timeout"):
        model.invoke("hi")
    assert openai_server.count() == 1  # a retry would queue behind the abandoned request


def test_other_faults_are_still_retried_under_the_local_profile(openai_server):
    from tests.fakes.openai_server import error

    openai_server.script(error(503))
    model = with_llm_retries(fake_chat_model(openai_server), 2, retry_timeouts=False)
    model.base_delay = 0.01
    assert model.invoke("hi").content == "ok"
    assert openai_server.count() == 2


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        (None, False),
    ],
)
def test_a_loopback_base_url_picks_the_local_profile(url, local):
    env = {"OPENAI_BASE_URL": url} if url else {}
    assert is_local_url(url) is local
    assert resolve("openai:m", env).profile == ("local" if local else "remote")


def test_what_the_user_set_wins_over_the_profile():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}
    config = resolve("openai:m", env, timeout=300.0)
    assert config.profile == "local" and config.timeout == 300.0
    assert config.max_tokens == PROFILES["local"].max_tokens
    assert resolve("openai:m", env, profile="remote").profile == "remote"


def test_settings_from_environment_reach_the_client_config(monkeypatch):
    from ragloop.assembly import llm_client
    from ragloop.config import load_settings

    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}
    monkeypatch.setenv("RAGLOOP_LLM_MAX_RETRIES", "0")
    config = llm_client(load_settings(llm="openai:m"), env)
    assert config.profile == "local" and config.max_retries == 0
    assert config.timeout == PROFILES["local"].timeout  # not set: the profile's
    monkeypatch.setenv("RAGLOOP_LLM_TIMEOUT", "7")
    assert llm_client(load_settings(llm="openai:m"), env).timeout == 7.0


def test_structured_method_follows_the_server():
    assert structured_method(None) == "json_schema"
    assert structured_method("https://api.openai.com/v1") == "json_schema"
    assert structured_method("http://127.0.0.1:8080/v1") == "json_object"
    assert structured_method("http://127.0.0.1:8080/v1", "prompt") == "prompt"


def test_eval_takes_its_timeout_and_retries_from_the_environment(
    openai_server,
    tmp_path,
    monkeypatch,
):
    import json

    from typer.testing import CliRunner

    from ragloop.cli import app

    openai_server.default = hang(30)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"user_input": "q", "response": "a", "retrieved_contexts": ["c"]}))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-eval-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.setenv("RAGLOOP_LLM_TIMEOUT", "0.5")
    monkeypatch.setenv("RAGLOOP_LLM_MAX_RETRIES", "1")
    args = ["eval", str(rows), "-m", "faithfulness", "--llm", "openai:m", "--no-cache", "-q"]
    result = CliRunner().invoke(app, [*args, "--json"])
    summary, _ = json.JSONDecoder().raw_decode(result.output[result.output.index("{") :])
    assert summary["metrics"]["faithfulness"]["measured"] == 0, result.output
    # the local profile does not retry a timeout; the remote one retries it once
    assert openai_server.count() == 1
    monkeypatch.setenv("RAGLOOP_LLM_PROFILE", "remote")
    openai_server.reset()
    CliRunner().invoke(app, [*args, "--json"])
    assert openai_server.count() == 2


def test_a_stream_that_never_ends_stops_at_the_cap_and_hangs_up(openai_server):
    openai_server.default = endless()
    model = fake_chat_model(openai_server, max_tokens=16, timeout=20)
    text = "".join(chunk.text for chunk in model.stream("hi"))
    assert 128 <= len(text) < 128 + len("word ")  # 8 characters per token of the cap
    assert openai_server.hung_up.wait(10)  # the connection was closed: the server stops
    assert openai_server.chat_requests()[0].body["max_tokens"] == 16


def test_eval_against_a_failing_server_prints_the_one_fault_line(
    openai_server, tmp_path, monkeypatch
):
    import json

    from typer.testing import CliRunner

    from ragloop.cli import app
    from tests.fakes.openai_server import error

    openai_server.default = error(500)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"user_input": "q", "response": "a", "retrieved_contexts": ["c"]}))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-eval-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.setenv("RAGLOOP_LLM_MAX_RETRIES", "1")
    args = ["eval", str(rows), "-m", "faithfulness", "--llm", "openai:m", "--no-cache", "-q"]
    result = CliRunner().invoke(app, args)
    flat = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert f"error: the LLM server {openai_server.url} failed after 2 attempts" in flat
    assert "server error (HTTP 500)" in flat
