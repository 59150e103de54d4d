"""Does a generated test set pick the same configuration as hand-written questions?

On each development corpus with hand-written questions (the PostgreSQL docs and the Python
library docs, cut to the pages those questions are about), the same small grid (retriever
orders x judge modes x k) runs on the hand-written set and on a generated set of the same
size; each configuration is scored by the passage hit of the loop's kept contexts (a
hand-written row: a kept chunk of the gold page holds a gold snippet; a generated row: the
share of its reference chunks among the kept ones). The report is Kendall's tau (tau-b,
scipy) between the two orderings of configurations, and whether the winner is the same.
Sets saved earlier (``--generated NAME=PATH``, e.g. today's generator's, written with
``--write-generated``) are scored beside the one generated now.

Usage: ``python bench/testset_ranking.py [--size 78] [--corpora pg,py]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import _pgdocs
import _pydocs
from _loopbench import bench_pipeline
from _pgdocs import Question, passage_hit
from _pgdocs_parse import page_name

from ragloop.testset import KINDS, generate

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".ragloop" / "bench" / "testset_ranking"
ORDERS = (("dense", "sparse", "hybrid"), ("sparse",))
JUDGES = ("standard", "second_response")
KS = (2, 5)
#: the answerable kinds: unanswerable rows have no passage to hit
MIX = {
    "single_hop_specific_query_synthesizer": 0.3,
    "single_hop_paraphrased_query_synthesizer": 0.3,
    "multi_hop_specific_query_synthesizer": 0.2,
    "multi_hop_abstract_query_synthesizer": 0.2,
}
CORPORA = {"pg": _pgdocs, "py": _pydocs}


def sub_corpus(name: str) -> tuple[Path, list[Question]]:
    """The pages the hand-written questions are about, copied into a bench folder."""
    mod = CORPORA[name]
    pages = {page_name(p): p for p in mod.select_pages(mod.corpus_root())}
    rows = [json.loads(line) for line in mod.NATURAL_PATH.read_text().splitlines() if line]
    rows = [r for r in rows if r["gold_page"] in pages]
    wanted = sorted({r["gold_page"] for r in rows})
    dest = _pgdocs.place_pages([pages[p] for p in wanted], WORK / name / "corpus", __file__)
    questions = [
        Question(
            f"natural/{n}", "natural", r["question"], r["gold_page"], tuple(r["gold_snippets"])
        )
        for n, r in enumerate(rows)
    ]
    return dest, questions


def hand_score(contexts: list[dict[str, Any]], q: Question) -> float:
    return float(any(passage_hit(c["text"], q, c.get("source")) for c in contexts))


def gen_score(contexts: list[dict[str, Any]], row: dict[str, Any]) -> float:
    kept = {c["id"] for c in contexts}
    wanted = row["reference_context_ids"]
    return sum(i in kept for i in wanted) / len(wanted)


async def grid(pipe: Any, items: list[tuple[str, str, Any]]) -> dict[str, float]:
    """Mean score of each configuration over ``items`` (question, reference, scorer)."""
    out = {}
    for order, judge, k in itertools.product(ORDERS, JUDGES, KS):
        name = f"{'>'.join(order)}|{judge}|k={k}"
        scores = []
        for question, reference, score in items:
            r = await pipe.arun(
                question, reference=reference, retrievers=order, judge_mode=judge, k=k
            )
            scores.append(score(r.contexts))
        out[name] = statistics.fmean(scores)
    return out


def compare(hand: dict[str, float], gen: dict[str, float]) -> tuple[float, bool]:
    from scipy.stats import kendalltau

    names = list(hand)
    tau = kendalltau([hand[n] for n in names], [gen[n] for n in names]).statistic
    return float(tau), max(hand, key=hand.get) == max(gen, key=gen.get)


def overlap4(question: str, passage: str) -> float:
    """Share of the question's word 4-grams that occur in the passage."""
    from ragloop.testset.checks import ngram_overlap

    return ngram_overlap(question, [passage])


def gen_items(rows: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    rows = [r for r in rows if r.get("reference_context_ids")]
    return [(r["user_input"], r["reference"], lambda c, r=r: gen_score(c, r)) for r in rows]


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=78)
    ap.add_argument("--corpora", default="pg,py")
    ap.add_argument("--generated", action="append", default=[], help="NAME=PATH_{corpus}.jsonl")
    ap.add_argument("--write-generated", help="write the generated sets to PATH_{corpus}.jsonl")
    ap.add_argument("--only-generate", action="store_true")
    ap.add_argument("--embeddings", default="wordllama", help="the pipeline's embeddings")
    ap.add_argument("--mix", help="kind=share,... for the set generated now (default: MIX)")
    args = ap.parse_args()
    for name in args.corpora.split(","):
        started = time.perf_counter()
        corpus, questions = sub_corpus(name)
        questions = questions[: args.size]
        mix = MIX
        if args.mix:
            names = {v: k for k, v in KINDS.items()}
            mix = {names[k]: float(v) for k, v in (x.split("=") for x in args.mix.split(","))}
        ts = generate(corpus, len(questions), seed=0, mix=mix)
        if args.write_generated:
            path = Path(args.write_generated.replace("{corpus}", name))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in ts.rows), encoding="utf-8")
        paraphrased = [r for r in ts.rows if r["kind"] == "paraphrased"]
        med = (
            statistics.median(
                overlap4(r["user_input"], r["reference_contexts"][0]) for r in paraphrased
            )
            if paraphrased
            else float("nan")
        )
        print(f"\n== {name}: {len(questions)} hand-written questions, corpus {corpus}")
        print(f"generated now: {dict(ts.kinds)}; paraphrased median 4-gram overlap {med:.2f}")
        if args.only_generate:
            continue
        pipe = bench_pipeline(corpus, WORK / name, args.embeddings)
        hand_items = [
            (q.question, " ".join(q.gold_snippets), lambda c, q=q: hand_score(c, q))
            for q in questions
        ]
        sets = {"hand-written": hand_items, "generated (this code)": gen_items(ts.rows)}
        for spec in args.generated:
            label, path = spec.split("=", 1)
            rows = [
                json.loads(x) for x in Path(path.replace("{corpus}", name)).read_text().splitlines()
            ]
            sets[f"generated ({label})"] = gen_items(rows)
        results = {label: await grid(pipe, items) for label, items in sets.items()}
        hand = results["hand-written"]
        print(f"{'configuration':<36}" + "".join(f"{k[:24]:>26}" for k in results))
        for conf in hand:
            print(f"{conf:<36}" + "".join(f"{results[k][conf]:>26.3f}" for k in results))
        for label, res in results.items():
            if label == "hand-written":
                continue
            tau, same = compare(hand, res)
            print(f"{label}: n={len(sets[label])} Kendall tau-b {tau:.2f}, same winner: {same}")
        print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
