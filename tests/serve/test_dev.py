"""What ``ragloop serve`` starts: langgraph dev on 127.0.0.1, every outside call switched off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragloop.serve.dev import OFFLINE_ENV, dev_command, server_env, write_config


def test_dev_command_is_local_and_quiet(tmp_path):
    pytest.importorskip("langgraph_api", reason="langgraph-cli[inmem] missing")
    cmd = dev_command(tmp_path / "langgraph.json", port=2999, jobs=3)
    assert cmd[1] == "dev" and cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert {"--no-browser", "--no-reload"} <= set(cmd)
    assert cmd[cmd.index("--n-jobs-per-worker") + 1] == "3"
    env = server_env({"RAGLOOP_WEB": "off"})
    assert env["LANGGRAPH_CLI_NO_ANALYTICS"] == "1" and env["LANGGRAPH_NO_VERSION_CHECK"] == "1"
    assert env["LANGSMITH_TRACING"] == "false" and env["RAGLOOP_WEB"] == "off"
    assert set(OFFLINE_ENV) <= set(env)


def test_config_names_the_graph_factory_and_the_postgres_checkpointer(tmp_path):
    plain = json.loads(write_config(tmp_path / "a").read_text())
    assert plain["graphs"] == {"ragloop": "ragloop.serve.graph:make_graph"}
    assert "checkpointer" not in plain
    spec = json.loads(write_config(tmp_path / "b", postgres=True).read_text())
    path, attr = spec["checkpointer"]["path"].rsplit(":", 1)
    assert Path(path).is_file() and attr in Path(path).read_text()


def test_repo_langgraph_json_uses_the_factory():
    root = Path(__file__).resolve().parents[2]
    spec = json.loads((root / "langgraph.json").read_text())
    path, attr = spec["graphs"]["ragloop"].rsplit(":", 1)
    assert attr == "make_graph" and (root / path).is_file()  # the factory, wherever it lives
    assert ".langgraph_api/" in (root / ".gitignore").read_text()
    ignored = (root / ".dockerignore").read_text().split()
    assert {".venv", ".git", ".ragloop", ".env"} <= set(ignored)


def test_a_taken_port_is_a_clear_error_and_port_0_picks_a_free_one():
    import socket

    from ragloop.errors import ConfigError
    from ragloop.serve.dev import claim_port

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        with pytest.raises(ConfigError, match=f"port {taken} on 127.0.0.1 is in use.*--port"):
            claim_port("127.0.0.1", taken)
    assert claim_port("127.0.0.1", 0) > 0


def test_serve_refuses_a_taken_port_before_starting(tmp_path, monkeypatch):
    import socket

    from typer.testing import CliRunner

    from ragloop.cli import app

    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--port", str(taken)])
    assert result.exit_code == 2
    assert f"port {taken} on 127.0.0.1 is in use" in result.output
    assert "LangGraph Server on" not in result.output  # no banner naming a port it is not on
