"""LLM-mode bench: the loop against naive RAG, both answering with one simulated competent model.

The model (``_simulated_llm.py``) is served on 127.0.0.1 as an OpenAI-compatible server with
a fixed latency, so every request goes through ragloop's real LLM client (reply cap,
retries, structured output). Per noise level (0, 10%, 30%) it reports, over the demo QA set:
kept (a kept context holds the gold passage), cited (a cited one does), answer hit (the
answer states the gold sentence), not_found accuracy (an unanswerable question is answered
"not found"), LLM calls per question, fallbacks in the path, and wall time; naive RAG
retrieves k with the hybrid retriever and answers once.

    python bench/llm_loop.py [--limit N] [--latency 0.02] [--noise 0,0.1,0.3]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _demo import demo_pipeline, qa_rows, reference_sources  # noqa: E402
from _simulated_llm import SimulatedLLM, first_sentence, holds, said_not_found  # noqa: E402

from ragloop._async import run_sync  # noqa: E402
from ragloop.llm.faults import with_llm_retries  # noqa: E402
from ragloop.providers import get_chat_model  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, reply  # noqa: E402

logging.getLogger("ragloop").setLevel(logging.ERROR)
ANSWERABLE = ("kb", "web")


def _hit(row: dict[str, Any], answer: str) -> bool:
    if row["kind"] == "unanswerable":
        return said_not_found(answer)
    return first_sentence(row["reference"]).lower() in answer.lower()


def _score(row: dict[str, Any], kept: list[dict], cited: list[dict], answer: str) -> dict:
    gold = reference_sources(row)
    texts = row.get("reference_contexts") or []

    def holding(items: list[dict]) -> bool:
        return any(c.get("source") in gold or holds(c.get("text", ""), texts) for c in items)

    return {
        "kind": row["kind"],
        "kept": holding(kept) if row["kind"] in ANSWERABLE else None,
        "cited": holding(cited) if row["kind"] in ANSWERABLE else None,
        "hit": _hit(row, answer),
        "not_found_ok": said_not_found(answer) if row["kind"] == "unanswerable" else None,
    }


def _naive(pipe: Any, question: str) -> tuple[list[dict], list[dict], str]:
    docs = pipe.deps.retrievers["hybrid"].invoke(question)[: pipe.context.k]
    contexts = [
        {"text": d.page_content, "origin": "kb", "source": d.metadata.get("source", "")}
        for d in docs
    ]
    answer, cited = run_sync(pipe.deps.strategies.answer(question, contexts))
    return contexts, [contexts[n - 1] for n in set(cited) if 1 <= n <= len(contexts)], answer


def run(noise: float, rows: list[dict], latency: float) -> dict[str, Any]:
    sim = SimulatedLLM(qa_rows(), noise=noise, seed=7)
    with FakeOpenAIServer(reply(sim), delay=latency) as server:
        chat = get_chat_model("openai:simulated", env=server.env(), max_retries=0, timeout=30)
        pipe = demo_pipeline(llm=with_llm_retries(chat, 1))
        loop, naive = [], []
        started = time.perf_counter()
        before = server.count()
        fallbacks = 0
        for row in rows:
            result = pipe.run(row["user_input"])
            cited = [
                c for c in result.contexts if any(c["id"] == x["id"] for x in result.citations)
            ]
            loop.append(_score(row, result.contexts, cited, result.answer))
            fallbacks += sum(1 for s in result.steps if s["node"].endswith("-fallback"))
        loop_time, loop_calls = time.perf_counter() - started, server.count() - before
        started, before = time.perf_counter(), server.count()
        for row in rows:
            kept, cited, answer = _naive(pipe, row["user_input"])
            naive.append(_score(row, kept, cited, answer))
        naive_time, naive_calls = time.perf_counter() - started, server.count() - before
    print(f"  simulated model calls by step (both systems): {sim.calls}", file=sys.stderr)
    return {
        "loop": _summary(loop, loop_calls, loop_time, len(rows), fallbacks),
        "naive": _summary(naive, naive_calls, naive_time, len(rows), 0),
    }


def _mean(values: list[Any]) -> float:
    usable = [bool(v) for v in values if v is not None]
    return sum(usable) / len(usable) if usable else float("nan")


def _summary(scores: list[dict], calls: int, wall: float, n: int, fallbacks: int) -> dict:
    return {
        "kept": _mean([s["kept"] for s in scores]),
        "cited": _mean([s["cited"] for s in scores]),
        "answer hit": _mean([s["hit"] for s in scores]),
        "not_found acc": _mean([s["not_found_ok"] for s in scores]),
        "calls/q": calls / n,
        "fallbacks": fallbacks,
        "wall s": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per LLM request")
    parser.add_argument("--noise", default="0,0.1,0.3")
    args = parser.parse_args()
    rows = qa_rows()[: args.limit] if args.limit else qa_rows()
    columns = ["kept", "cited", "answer hit", "not_found acc", "calls/q", "fallbacks", "wall s"]
    print(f"demo QA set, {len(rows)} questions, latency {args.latency} s per LLM request")
    print(f"{'noise':>5} {'system':<6} " + " ".join(f"{c:>13}" for c in columns))
    for noise in (float(x) for x in args.noise.split(",")):
        out = run(noise, rows, args.latency)
        for system in ("loop", "naive"):
            values = " ".join(f"{out[system][c]:>13.3f}" for c in columns)
            print(f"{noise:>5.2f} {system:<6} {values}", flush=True)


if __name__ == "__main__":
    main()
