"""Runner throughput against a fake OpenAI server that answers every request after 200 ms.

200 rows x 2 single-call LLM metrics (context_recall: one attribution call per row;
llm_context_precision_with_reference: one verdicts call per row) at concurrency 16 with
the cache off: 400 calls expected. A 4-row warm-up run goes first, unclocked, so that
once-per-process costs (imports, first validations, first request) are not counted as
throughput. The server runs in its own process so its threads do
not compete with the runner for the GIL. Ideal wall time = calls x 0.2 s / 16. Prints
calls, wall time, ideal time and ideal/wall; exit code 1 below 90% or on a wrong count.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragloop.eval.metrics.base import metric_names  # noqa: E402
from ragloop.eval.metrics.context_llm import PRECISION_PROMPT, RECALL_PROMPT  # noqa: E402
from ragloop.eval.runner import evaluate  # noqa: E402
from ragloop.providers import get_chat_model  # noqa: E402
from tests.fakes.openai_server import STATS_PATH, FakeOpenAIServer  # noqa: E402

ROWS, DELAY, CONCURRENCY, TARGET, WARMUP = 200, 0.2, 16, 0.90, 4
METRICS = ("context_recall", "llm_context_precision_with_reference")


def judge_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A valid reply for either judge prompt, chosen by the request's system message."""
    system, human = body["messages"][0]["content"], body["messages"][1]["content"]
    inputs = json.loads(human.rsplit("Input:\n", 1)[1].rsplit("\nOutput:", 1)[0])
    if system.startswith(RECALL_PROMPT.instruction.strip()):
        return {
            "classifications": [
                {"statement": inputs["reference"], "reason": "stated", "attributed": True}
            ]
        }
    if system.startswith(PRECISION_PROMPT.instruction.strip()):
        return {"verdicts": [{"reason": "on topic", "useful": True} for _ in inputs["contexts"]]}
    raise ValueError("unexpected prompt")


def dataset() -> list[dict[str, Any]]:
    return [
        {
            "user_input": f"What does error code KX-{i:03d} mean?",
            "response": f"KX-{i:03d} means the brush motor stalled.",
            "reference": f"Error KX-{i:03d} is a stalled brush motor.",
            "retrieved_contexts": [f"KX-{i:03d}: brush motor stalled; clear the brush."],
        }
        for i in range(ROWS)
    ]


def serve() -> None:
    """Child process: serve until stdin closes; the first stdout line is the base URL."""
    with FakeOpenAIServer(judge_reply, delay=DELAY) as server:
        print(server.url, flush=True)
        sys.stdin.read()


def _chat_calls(stats_url: str) -> int:
    with urllib.request.urlopen(stats_url, timeout=10) as resp:
        return int(json.loads(resp.read())["chat"])


def main() -> int:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = child.stdout.readline().strip()  # type: ignore[union-attr]
        llm = get_chat_model(
            "openai:fake-judge", env={"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": url}
        )
        stats = url.rsplit("/v1", 1)[0] + STATS_PATH
        # warm-up: imports, first pydantic validations, first request (once per process)
        metric_names()
        evaluate(dataset()[:WARMUP], list(METRICS), llm, max_concurrency=CONCURRENCY, cache=False)
        before = _chat_calls(stats)
        started = time.perf_counter()
        result = evaluate(dataset(), list(METRICS), llm, max_concurrency=CONCURRENCY, cache=False)
        wall = time.perf_counter() - started
        calls = _chat_calls(stats) - before
    finally:
        child.kill()
        child.wait()
    ideal = calls * DELAY / CONCURRENCY
    ratio = ideal / wall
    measured = {name: f"{s.measured}/{s.total}" for name, s in result.metrics.items()}
    expected = ROWS * len(METRICS)
    print(
        f"rows {ROWS} x metrics {len(METRICS)} ({', '.join(METRICS)}), one call each, "
        f"concurrency {CONCURRENCY}, server delay {DELAY * 1000:.0f} ms, cache off, "
        f"after a {WARMUP}-row warm-up run"
    )
    print(f"measured: {measured}")
    print(f"calls: {calls} (runner counted {result.totals['llm_calls']}, expected {expected})")
    print(f"wall time: {wall:.2f} s")
    print(f"ideal time: {ideal:.2f} s (calls x {DELAY} s / {CONCURRENCY})")
    print(f"ideal/wall: {ratio:.1%} (target >= {TARGET:.0%})")
    ok = ratio >= TARGET and calls == expected
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        sys.exit(main())
