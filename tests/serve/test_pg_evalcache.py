"""The evaluation cache in Postgres: replicas share entries, an eval run resumes from it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.errors import ConfigError
from ragloop.eval.metrics.base import MetricResult
from ragloop.eval.pgstore import PgStore, open_store
from ragloop.eval.runner import evaluate
from tests.fakes.chat import ScriptedChatModel
from tests.test_runner import FnMetric


def _rows(n: int, **extra: Any) -> list[dict[str, Any]]:
    tag = uuid.uuid4().hex  # the cluster is shared by the session: no entry from another test
    return [{"user_input": f"{tag} q{i}", "response": f"answer {i}", **extra} for i in range(n)]


async def _length(sample: Any, n: int) -> MetricResult:
    return MetricResult(len(sample.user_input) / 100, "length")


def test_two_stores_as_two_replicas_see_each_others_entries(pg_url):
    one, two = PgStore(pg_url), PgStore(pg_url)
    try:
        ns = uuid.uuid4().hex
        assert one.get(ns, "k") is None
        one.put(ns, "k", b"\x00from one")
        assert two.get(ns, "k") == b"\x00from one"  # bytes kept exactly
        two.put(ns, "k", b"newer")  # a later value replaces, as the SQLite store does
        assert one.get(ns, "k") == b"newer"
        assert one.get(ns + "x", "k") is None  # namespaces are apart
    finally:
        one.close()
        two.close()


def test_open_store_is_sqlite_by_default_and_postgres_with_a_url(pg_url, tmp_path):
    local = open_store(tmp_path / "c")
    try:
        assert local.path == tmp_path / "c" / "ragloop-cache.sqlite"
    finally:
        local.close()
    shared = open_store(tmp_path / "unused", pg_url)
    try:
        assert isinstance(shared, PgStore)
    finally:
        shared.close()
    assert not (tmp_path / "unused").exists()


def test_an_unreachable_database_is_a_clear_error_without_the_password():
    with pytest.raises(ConfigError, match="RAGLOOP_DATABASE_URL") as info:
        PgStore("postgresql://u:s3cret@127.0.0.1:1/none?connect_timeout=1")
    assert "s3cret" not in str(info.value)


def test_an_eval_resumes_from_the_postgres_cache_on_another_machine(pg_url, tmp_path):
    data = _rows(5)
    metric = FnMetric(_length)
    first = evaluate(data, [metric], cache_dir=tmp_path / "a", database_url=pg_url)
    assert sum(metric._calls.values()) == 5 and first.totals["resumed"] == 0
    # another machine: another cache folder, the same database
    again = evaluate(data, [metric], cache_dir=tmp_path / "b", database_url=pg_url)
    assert sum(metric._calls.values()) == 5  # no new metric job
    assert again.totals["resumed"] == 5
    assert json.dumps(again.to_records()) == json.dumps(first.to_records())
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_llm_replies_come_from_the_postgres_cache(pg_url, tmp_path):
    reply = {"classifications": [{"statement": "s", "reason": "r", "attributed": True}]}
    llm = ScriptedChatModel(script=[reply])
    tag = uuid.uuid4().hex
    data = _rows(3, reference=f"{tag} answer", retrieved_contexts=[f"{tag} answer"])
    first = evaluate(data, ["context_recall"], llm, cache_dir=tmp_path / "a", database_url=pg_url)
    assert len(llm.calls) == 3 and first.totals["llm_calls"] == 3
    again = evaluate(
        data, ["context_recall"], llm, cache_dir=tmp_path / "b", database_url=pg_url, resume=False
    )
    assert len(llm.calls) == 3  # no new LLM call
    assert again.totals["llm_calls"] == 0 and again.totals["cache_hits"] == 3
    assert again.means() == first.means()


def test_ragloop_eval_uses_the_database_url(pg_url, tmp_path, monkeypatch):
    data = tmp_path / "qa.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in _rows(4, reference="answer 1")) + "\n")
    monkeypatch.setenv("RAGLOOP_DATABASE_URL", pg_url)
    monkeypatch.chdir(tmp_path)
    args = ["eval", str(data), "--metrics", "exact_match", "-q", "--json", "--cache-dir"]
    first = CliRunner().invoke(app, [*args, str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(app, [*args, str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["totals"]["resumed"] == 4
    assert json.loads(first.stdout)["totals"]["resumed"] == 0
    assert not (tmp_path / "b").exists()  # the cache is in Postgres, not in the folder
