"""The first hour of a new user: hints name flags that exist, help says what is supported,
no debug noise, progress without a terminal, verdicts whose numbers show why, and a warning
when the demo QA set is answered from another corpus."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ragloop.config import Context
from ragloop.nodes.judge import compared, verdict_of

FIXTURES = Path(__file__).parent.parent / "fixtures"
DEMO_QA = Path(__file__).parent.parent.parent / "src" / "ragloop" / "data" / "qa.jsonl"


def _flat(result) -> str:
    return " ".join(result.output.split())


def test_hints_name_flags_the_command_has(tmp_path, cli, monkeypatch, ledger):
    idx = tmp_path / "idx"
    assert cli("index", FIXTURES / "corpus", "--out", idx).exit_code == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nSome text about apples.", encoding="utf-8")
    refused = _flat(cli("index", other, "--out", idx))
    monkeypatch.setenv("RAGLOOP_EMBEDDINGS", "minilm")
    wrong = _flat(cli("ask", "What is RM-12?", "--index", idx))
    ok = "--index" not in refused and "--out" in refused
    ok = ok and "RAGLOOP_EMBEDDINGS=wordllama" in wrong and "or --embeddings" not in wrong
    ledger("first hour: hints name existing flags", 2, int(not ok))
    assert ok, (refused, wrong)


def test_help_says_what_is_supported(cli, ledger):
    index_help, chat_help = _flat(cli("index", "--help")), _flat(cli("chat", "--help"))
    ok = ".pdf" in index_help and "demo base" not in chat_help
    ledger("first hour: help texts", 2, int(not ok))
    assert ok


def test_no_bm25s_debug_line_once_logging_is_configured(ledger):
    code = (
        "import logging; logging.basicConfig(level=logging.INFO)\n"
        "from langchain_core.documents import Document\n"
        "from ragloop.retrievers.sparse import build_bm25\n"
        "build_bm25([Document(page_content='a b c', id='1')])\n"
    )
    err = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    ).stderr
    ledger("first hour: no DEBUG:bm25s", 1, int("DEBUG:bm25s" in err))
    assert "DEBUG:bm25s" not in err, err


def test_index_prints_progress_lines_without_a_terminal(tmp_path, cli, ledger):
    result = cli("index", FIXTURES / "corpus", "--out", tmp_path / "idx")
    ok = result.exit_code == 0 and "embedded 10/10 chunks" in _flat(result)
    ledger("first hour: index progress without a terminal", 1, int(not ok))
    assert ok, result.output


@given(st.floats(0, 1), st.floats(0, 1))
def test_a_verdict_shows_why_one_number_is_below_the_other(value, threshold):
    shown, bar = compared(value, threshold)
    assert (shown == bar) == (value == threshold)


def test_the_recall_reason_never_reads_equal_numbers_as_below(ledger):
    _, reason = verdict_of(3, 0.9, 0.5999, Context(recall_threshold=0.6))
    ledger("first hour: judge reason precision", 1, int("0.60 < 0.60" in reason))
    assert reason == "recall 0.5999 < 0.6000"


def test_eval_run_warns_when_the_demo_set_meets_another_index(tmp_path, cli, ledger):
    idx = tmp_path / "idx"
    assert cli("index", FIXTURES / "corpus", "--out", idx).exit_code == 0
    args = ("eval", DEMO_QA, "--run", "--limit", "1", "--index", idx, "-q", "-m", "exact_match")
    out = _flat(cli(*args))
    ok = "warning: the bundled demo QA set" in out and "not from the demo base" in out
    ledger("first hour: demo QA set vs another index", 1, int(not ok))
    assert ok, out
