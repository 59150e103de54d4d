"""ask (every demo question), chat (two turns) and eval against a real 135M model, with the
local profile's defaults: no crash, every unmeasured score NaN with a reason, the iteration cap
held, and no request generating past the reply cap by the server's own count. Slow and opt-in
(`make test-local-llm`)."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragloop.data import KB_DIR
from tests.local_llm.conftest import MODEL

CAP = 2
#: `make demo`'s questions
QUESTIONS = [
    "Which KP-PA-24 adapters are covered by the safety notice in Ireland?",
    "How do I clear DK-04 on the Kestrel Dock?",
    "What is Kestrel Support's phone number in Belgium?",
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("local-llm")


def _ragloop(env: dict[str, str], workdir: Path, *args: str, stdin: str | None = None) -> Any:
    full = {
        **os.environ,
        **env,
        "RAGLOOP_DATA_DIR": str(workdir / "data"),
        "RAGLOOP_MAX_ITERATIONS": str(CAP),
    }
    done = subprocess.run(
        [sys.executable, "-m", "ragloop", *args],
        env=full,
        cwd=workdir,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


def _where(workdir: Path) -> list[str]:
    return ["--corpus", str(KB_DIR), "--index", str(workdir / "index")]


def _within_the_cap(proxy: Any) -> None:
    """The requests since the last check: some were made, and none went past its cap."""
    calls = proxy.take()
    assert calls, "no request reached the server"
    assert all(c.cap for c in calls), [c.cap for c in calls]
    past = [(c.cap, c.completion_tokens) for c in calls if c.past_cap]
    assert not past, past


@pytest.mark.parametrize("question", QUESTIONS)
def test_ask_answers_with_a_reason_for_every_score_and_holds_the_cap(
    llama_server, llama_proxy, workdir, question
):
    llama_proxy.take()
    done = _ragloop(
        llama_server,
        workdir,
        "ask",
        question,
        "--llm",
        f"openai:{MODEL}",
        "--json",
        *_where(workdir),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout)
    assert data["answer"].strip() and data["llm_calls"] > 0
    assert data["iterations"] <= CAP
    assert sum(s["node"] == "retrieve" for s in data["steps"]) <= CAP + 1
    for name, value in data["scores"].items():
        reason = data["score_reasons"][name]
        assert reason and "no reason recorded" not in reason, (name, value)
        assert value is None or -1.0 <= value <= 1.0
    _within_the_cap(llama_proxy)


def test_chat_two_turns(llama_server, llama_proxy, workdir):
    llama_proxy.take()
    lines = "\n".join([*QUESTIONS[:2], "quit"]) + "\n"
    done = _ragloop(
        llama_server, workdir, "chat", "--llm", f"openai:{MODEL}", *_where(workdir),
        stdin=lines,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(workdir / "data" / "traces.sqlite") as db:
        turns = db.execute(
            "SELECT iterations, scores FROM turns WHERE source != 'ask' ORDER BY id"
        ).fetchall()
    assert len(turns) == 2, (turns, done.stdout[-3000:], done.stderr[-3000:])
    assert all(int(iterations) <= CAP for iterations, _ in turns)
    _within_the_cap(llama_proxy)


def test_eval_every_failure_is_nan_with_a_reason(llama_server, llama_proxy, workdir):
    llama_proxy.take()
    rows = [
        {
            "user_input": "How do I clear DK-04 on the Kestrel Dock?",
            "response": "Unplug the dock and clear the duct at the base of the ramp.",
            "retrieved_contexts": ["DK-04 means the duct is blocked: unplug and clear it."],
            "reference": "Unplug the dock, remove the duct cover and clear the duct.",
        },
        {
            "user_input": "What is the capital of France?",
            "response": "Paris.",
            "retrieved_contexts": ["Paris is the capital of France."],
            "reference": "Paris",
        },
    ]
    data = workdir / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = workdir / "eval-out"
    metrics = "faithfulness,answer_relevancy,context_recall"
    done = _ragloop(
        llama_server, workdir, "eval", str(data), "--metrics", metrics, "--llm",
        f"openai:{MODEL}", "--no-cache", "-q", "--concurrency", "1", "--out", str(out),
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr[-3000:]  # 3: the small model measured nothing
    for line in (out / "rows.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for name in metrics.split(","):
            value = record.get(name)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                assert record.get(f"{name}.reason"), record
    _within_the_cap(llama_proxy)
