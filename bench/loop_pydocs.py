"""The loop on a second real corpus: the Python 3.11 library reference (Debian python3.11-doc).

The same measures as bench/loop_realcorpus.py, on other documents and another way of writing
them (Sphinx object entries, module headings, lower-case sentences that start with a
parameter name): each single retriever at k = 5, their per-question oracle, the loop (kept
and cited) and the latency of the loop against naive hybrid RAG, cold memos, same process.
Questions come from the pages' object entries (see bench/_pydocs.py): ``named`` ("What does
os.setresgid do?") and ``description`` (the entry's first sentence as a "Which function ..."
question). Usage: ``python bench/loop_pydocs.py [--limit N]``; the first run indexes about
11,000 chunks (a few minutes with MiniLM), later runs reuse the index.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from dataclasses import replace
from typing import Any

from _loopbench import bench_pipeline
from _pydocs import DEFAULT_DEST, KINDS, PyDocsMissing, build_corpus, load_questions
from loop_realcorpus import SINGLES, latency_lines, naive_hybrid, run_loop, singles, target_line


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=150, help="questions per kind")
    ap.add_argument("--embeddings", default=None)
    args = ap.parse_args()
    try:
        corpus = build_corpus()
    except PyDocsMissing as exc:
        print(f"skipped: {exc}")
        return 0
    pipe = bench_pipeline(corpus, DEFAULT_DEST.parent, args.embeddings)
    pipe.context = replace(pipe.context, retrieval="always")  # no closed-book draft here
    qs = load_questions(corpus, per_kind=args.limit)
    print(pipe.describe_sources())
    counts = ", ".join(f"{k}={sum(q.kind == k for q in qs)}" for k in KINDS)
    print(f"{len(qs)} questions: {counts}")
    rows: list[dict[str, Any]] = []
    for n, q in enumerate(qs, 1):
        got = await singles(pipe, q)
        row: dict[str, Any] = {"kind": q.kind, **{s: got[s][0] for s in SINGLES}}
        row["oracle"] = any(row[s] for s in SINGLES)
        if n % 2:  # alternate which side runs first
            row["loop"] = await run_loop(pipe, q, cold_start=True)
            row["naive_ms"] = await naive_hybrid(pipe, q)
        else:
            row["naive_ms"] = await naive_hybrid(pipe, q)
            row["loop"] = await run_loop(pipe, q, cold_start=True)
        rows.append(row)
        if n % 50 == 0:
            print(f"  {n}/{len(qs)} questions", file=sys.stderr)
    report(pipe.context.retrievers[0], pipe.context.k, rows)
    return 0


def report(first: str, k: int, rows: list[dict[str, Any]]) -> None:
    mean = statistics.mean
    cols = [*SINGLES, "oracle", "kept", "kept@k", "cited", "iters"]
    print(f"\npassage hit@{k} (first retriever: {first})")
    print(f"{'group':<13}{'n':>4}" + "".join(f"{c:>9}" for c in cols))
    for g in (*KINDS, "all"):
        rs = [r for r in rows if g in ("all", r["kind"])]
        if not rs:
            continue
        vals = [mean(r[s] for r in rs) for s in (*SINGLES, "oracle")]
        vals += [mean(r["loop"][m] for r in rs) for m in ("kept", "kept@k", "cited", "iters")]
        print(f"{g:<13}{len(rs):>4}" + "".join(f"{v:>9.3f}" for v in vals))
    print("\ntargets (as bench/loop_realcorpus.py; reported, not asserted):")
    for g in (*KINDS, "all"):
        rs = [r for r in rows if g in ("all", r["kind"])]
        if rs:
            print(target_line(g, rs, first))
    for line in latency_lines([r["loop"]["ms"] for r in rows], [r["naive_ms"] for r in rows]):
        print(line)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
