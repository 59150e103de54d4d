"""Naive RAG with each retriever against the self-correcting loop, offline, on the demo QA set.

Prints, by question kind: the share of rows whose final contexts hold a reference document,
answer token-F1 against the reference, mean iterations, the share that retrieved at all, and
the share that abstained (said it found nothing relevant). The loop must beat naive dense
RAG on context hit rate (kb + web rows).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections import defaultdict

from _demo import demo_pipeline, qa_rows, reference_sources

from ragloop.nodes.answer import NOT_FOUND
from ragloop.nodes.base import search, to_item
from ragloop.text import token_f1

KINDS = ("kb", "web", "general", "unanswerable")


Outcome = tuple[bool, float, int, bool, bool]  # hit, F1, iterations, retrieved, abstained


async def naive(pipe, name: str, row: dict) -> Outcome:
    docs = await search(pipe.deps.retrievers[name], row["user_input"], pipe.context.k)
    items = [to_item(d) for d in docs]
    answer, _ = await pipe.deps.strategies.answer(row["user_input"], items)
    hit = bool({i["source"] for i in items} & reference_sources(row))
    return hit, token_f1(answer, row["reference"]), 0, True, False


async def loop(pipe, row: dict) -> Outcome:
    result = await pipe.arun(row["user_input"])
    hit = bool({c["source"] for c in result.contexts} & reference_sources(row))
    abstained = result.answer == NOT_FOUND
    return (
        hit,
        token_f1(result.answer, row["reference"]),
        result.iterations,
        result.retrieved,
        abstained,
    )


async def main() -> int:
    pipe = demo_pipeline()
    rows = qa_rows()
    systems = {f"naive-{n}": n for n in ("dense", "sparse", "hybrid")}
    systems["loop"] = "loop"
    table: dict[str, dict[str, list[Outcome]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for label, name in systems.items():
            out = await (loop(pipe, row) if name == "loop" else naive(pipe, name, row))
            table[label][row["kind"]].append(out)
    counts = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
    print(f"demo QA set: {len(rows)} rows " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    print(
        f"{'system':<14}{'kind':<14}{'hit@final':>10}{'token-F1':>10}{'iters':>8}"
        f"{'retrieved':>10}{'abstained':>10}"
    )
    hit_rates = {}
    for label in systems:
        for kind in KINDS:
            got = table[label][kind]
            if not got:
                continue
            hit = statistics.mean(o[0] for o in got) if kind in ("kb", "web") else float("nan")
            f1, it = statistics.mean(o[1] for o in got), statistics.mean(o[2] for o in got)
            retrieved, abstained = (
                statistics.mean(o[3] for o in got),
                statistics.mean(o[4] for o in got),
            )
            print(
                f"{label:<14}{kind:<14}{hit:>10.3f}{f1:>10.3f}{it:>8.2f}"
                f"{retrieved:>10.2f}{abstained:>10.2f}"
            )
        both = table[label]["kb"] + table[label]["web"]
        hit_rates[label] = statistics.mean(o[0] for o in both)
        print(f"{label:<14}{'kb+web':<14}{hit_rates[label]:>10.3f}")
    ok = hit_rates["loop"] > hit_rates["naive-dense"]
    print(
        f"target: loop hit rate {hit_rates['loop']:.3f} > naive dense "
        f"{hit_rates['naive-dense']:.3f} -> {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
