"""Does a generated test set pick the same configuration as hand-written questions?

On each development corpus with hand-written questions (the PostgreSQL docs, the Python
library docs, the SQLite docs and the bash manual, cut to the pages those questions are
about), the same small grid (retriever orders x judge modes x k) runs on the hand-written set
and on a generated set of the same size; each configuration is scored per question by the
passage hit of the loop's kept contexts (a hand-written row: a kept chunk of the gold page
holds a gold snippet; a generated row: the share of its reference chunks among the kept ones).

Reported per corpus and set:

- Kendall's tau-b (scipy) between the two orderings of configurations, with a 95% bootstrap
  interval (both sets' questions resampled, independently, 1000 times);
- which configuration pairs the hand-written questions separate at all (paired bootstrap of
  the per-question difference, 95% interval without 0), their share, and tau over those pairs
  only (concordant minus discordant over the separated pairs): where the grid's configurations
  are within the noise of each other, no test set can order them and tau over all pairs is
  partly a coin toss;
- whether the winner is the same, and whether the generated set's winner is within the noise
  of the hand-written winner on the hand-written questions;
- tau of each generated kind on its own (which kinds rank like people's questions);
- the median word 4-gram overlap of paraphrased questions with their reference passage.

Sets saved earlier (``--generated NAME=PATH_{corpus}.jsonl``, e.g. main's generator's, written
with ``--write-generated`` from that checkout) are scored beside the one generated now.

Usage: ``python bench/testset_ranking.py [--size 78] [--corpora pg,py,sqlite,bash]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _newdocs
import _pgdocs
import _pydocs
import numpy as np
from _loopbench import bench_pipeline
from _pgdocs import Question, passage_hit
from _pgdocs_parse import page_name
from scipy.stats import kendalltau

from ragloop.experiments.verdict import paired_bootstrap
from ragloop.testset import DEFAULT_MIX, KINDS, generate
from ragloop.testset.checks import is_template, ngram_overlap
from ragloop.testset.offline import words

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".ragloop" / "bench" / "testset_ranking"
ORDERS = (("dense", "sparse", "hybrid"), ("sparse",))
JUDGES = ("standard", "second_response")
KS = (2, 5)
RESAMPLES = 1000
#: the generated set's mix: the generator's default, less unanswerable rows (no passage to hit)
MIX = {k: v for k, v in DEFAULT_MIX.items() if KINDS[k] != "unanswerable"}
NATURAL = {
    "pg": _pgdocs.NATURAL_PATH,
    "py": _pydocs.NATURAL_PATH,
    "sqlite": HERE / "data" / "sqlite_natural.jsonl",
    "bash": HERE / "data" / "bash_natural.jsonl",
}
Scorer = Callable[[list[dict[str, Any]]], float]
Item = tuple[str, str, str, Scorer]  # question, reference, kind, scorer


#: a token that names a thing: a dotted or snake_case identifier, a call, an upper-case keyword,
#: a command-line option or a shell variable
NAMES_A_THING = re.compile(
    r"(\w+\.\w+|\w+_\w+|\w+\(\)|\b[A-Z]{3,}(?: [A-Z]{2,})*\b|(?<!\w)--?[a-z][\w-]+|\$\w+)"
)


def fit_mix() -> None:
    """The share of hand-written questions that name a thing (the generator's DEFAULT_MIX)."""
    named = total = 0
    for name, path in NATURAL.items():
        questions = [json.loads(x)["question"] for x in path.read_text().splitlines() if x]
        hits = sum(bool(NAMES_A_THING.search(q)) for q in questions)
        print(f"{name}: {hits} of {len(questions)} hand-written questions name a thing")
        named, total = named + hits, total + len(questions)
    print(f"pooled: {named} of {total} = {named / total:.3f} (specific : paraphrased)")


REVIEW = HERE / "data" / "unanswerable_review.jsonl"
#: unanswerable questions read per corpus for the review (30 in all over the four)
REVIEW_PER_CORPUS = {"pg": 8, "py": 8, "sqlite": 7, "bash": 7}


def review_unanswerable(size: int) -> None:
    """The unanswerable rows of each corpus's default set (seed 0), beside the verdicts a person
    recorded in ``REVIEW`` for the same questions: the share judged unanswerable."""
    verdicts = {}
    if REVIEW.exists():
        for line in REVIEW.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                verdicts[(row["corpus"], row["question"])] = row
    judged = unanswerable_ = 0
    for name, n in REVIEW_PER_CORPUS.items():
        corpus, _ = sub_corpus(name)
        ts = generate(corpus, size, seed=0)
        rows = [r for r in ts.rows if r["kind"] == "unanswerable"][:n]
        for r in rows:
            seen = verdicts.get((name, r["user_input"]))
            mark = "not reviewed" if seen is None else seen["verdict"]
            judged += seen is not None
            unanswerable_ += bool(seen and seen["verdict"] == "unanswerable")
            template = " TEMPLATE FORM" if is_template(r["user_input"]) else ""
            print(f"{name}\t{mark}{template}\t{r['user_input']}\t{r['absent_terms']}")
    print(f"judged unanswerable by the reviewer: {unanswerable_} of {judged} reviewed")


def corpus_pages(name: str) -> list[Path]:
    if name == "pg":
        return _pgdocs.select_pages(_pgdocs.corpus_root())
    if name == "py":
        return _pydocs.select_pages(_pydocs.corpus_root())
    root_of, pages_of, _ = _newdocs.CORPORA[name]
    return pages_of(root_of())


def sub_corpus(name: str) -> tuple[Path, list[Question]]:
    """The pages the hand-written questions are about, copied into a bench folder."""
    pages = {page_name(p): p for p in corpus_pages(name)}
    lines = NATURAL[name].read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
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


def configurations() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{'>'.join(order)}|{judge}|k={k}", {"retrievers": order, "judge_mode": judge, "k": k})
        for order, judge, k in itertools.product(ORDERS, JUDGES, KS)
    ]


async def grid(pipe: Any, items: list[Item]) -> dict[str, np.ndarray]:
    """Per-question scores of each configuration over ``items``."""
    out = {}
    for name, options in configurations():
        scores = []
        for question, reference, _, score in items:
            r = await pipe.arun(question, reference=reference, **options)
            scores.append(score(r.contexts))
        out[name] = np.asarray(scores, dtype=float)
    return out


def tau_of(a: dict[str, float], b: dict[str, float]) -> float:
    names = list(a)
    return float(kendalltau([a[n] for n in names], [b[n] for n in names]).statistic)


def means(scores: dict[str, np.ndarray], idx: np.ndarray | None = None) -> dict[str, float]:
    return {k: float((v if idx is None else v[idx]).mean()) for k, v in scores.items()}


def tau_interval(
    hand: dict[str, np.ndarray], gen: dict[str, np.ndarray], seed: int = 0
) -> tuple[float, float]:
    """95% percentile interval of tau-b, both sets' questions resampled independently."""
    rng = np.random.default_rng(seed)
    nh, ng = len(next(iter(hand.values()))), len(next(iter(gen.values())))
    taus = []
    for _ in range(RESAMPLES):
        t = tau_of(means(hand, rng.integers(0, nh, nh)), means(gen, rng.integers(0, ng, ng)))
        if not np.isnan(t):
            taus.append(t)
    lo, hi = np.percentile(taus, [2.5, 97.5]) if taus else (np.nan, np.nan)
    return float(lo), float(hi)


def separated(scores: dict[str, np.ndarray]) -> dict[tuple[str, str], int]:
    """Pairs the questions tell apart: the sign of the paired difference (95% interval)."""
    out = {}
    for a, b in itertools.combinations(scores, 2):
        _, lo, hi, _ = paired_bootstrap(list(scores[a]), list(scores[b]), RESAMPLES, 0)
        if lo > 0 or hi < 0:
            out[(a, b)] = 1 if lo > 0 else -1
    return out


def tau_on(pairs: dict[tuple[str, str], int], gen: dict[str, float]) -> float:
    """Concordant minus discordant over ``pairs`` (a tie in ``gen`` counts neither)."""
    if not pairs:
        return float("nan")
    agree = sum(sign * np.sign(gen[a] - gen[b]) for (a, b), sign in pairs.items())
    return float(agree / len(pairs))


def gen_items(rows: list[dict[str, Any]]) -> list[Item]:
    rows = [r for r in rows if r.get("reference_context_ids")]
    return [
        (r["user_input"], r["reference"], r.get("kind", ""), lambda c, r=r: gen_score(c, r))
        for r in rows
    ]


def paraphrase_overlap(rows: list[dict[str, Any]]) -> tuple[float, int]:
    """Median share of a paraphrased question's word 4-grams found in its reference passage."""
    values = [
        ngram_overlap(r["user_input"], r["reference_contexts"])
        for r in rows
        if r.get("kind") == "paraphrased" and r.get("reference_contexts")
    ]
    return (statistics.median(values) if values else float("nan")), len(values)


def shared_words(question: str, reference: str) -> float:
    """Share of a question's content words that its reference sentence also uses."""
    mine = words(question)
    return len(mine & words(reference)) / len(mine) if mine else 0.0


def read_rows(path: str) -> list[dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def report(
    name: str, sets: dict[str, list[Item]], results: dict[str, dict[str, np.ndarray]]
) -> None:
    hand = results["hand-written"]
    print(f"{'configuration':<36}" + "".join(f"{k[:24]:>26}" for k in results))
    for conf in hand:
        print(f"{conf:<36}" + "".join(f"{results[k][conf].mean():>26.3f}" for k in results))
    pairs = separated(hand)
    total = len(hand) * (len(hand) - 1) // 2
    best = max(hand, key=lambda c: hand[c].mean())
    print(
        f"hand-written: {len(pairs)} of {total} configuration pairs separated "
        f"({len(pairs) / total:.0%}, paired bootstrap 95%)"
    )
    for label, res in results.items():
        if label == "hand-written":
            continue
        m = means(res)
        tau = tau_of(means(hand), m)
        lo, hi = tau_interval(hand, res)
        winner = max(m, key=lambda c: m[c])
        within = winner == best or (best, winner) not in pairs
        print(
            f"{name} {label}: n={len(sets[label])} Kendall tau-b {tau:.2f} [{lo:.2f}, {hi:.2f}]; "
            f"on separated pairs {tau_on(pairs, m):.2f}; same winner: {winner == best} "
            f"(generated winner within the noise of the hand-written one: {within})"
        )
        kinds: dict[str, list[int]] = defaultdict(list)
        for n, item in enumerate(sets[label]):
            kinds[item[2]].append(n)
        per_kind = []
        for kind, idx in sorted(kinds.items()):
            sub = means(res, np.asarray(idx))
            per_kind.append(f"{kind or '?'} (n={len(idx)}) {tau_of(means(hand), sub):.2f}")
        print(f"  tau-b by kind: {'; '.join(per_kind)}")


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=78)
    ap.add_argument("--corpora", default="pg,py,sqlite,bash")
    ap.add_argument("--generated", action="append", default=[], help="NAME=PATH_{corpus}.jsonl")
    ap.add_argument("--write-generated", help="write the generated sets to PATH_{corpus}.jsonl")
    ap.add_argument("--only-generate", action="store_true")
    ap.add_argument("--embeddings", default="wordllama", help="the pipeline's embeddings")
    ap.add_argument("--mix", help="kind=share,... for the set generated now (default: MIX)")
    ap.add_argument(
        "--review-unanswerable",
        action="store_true",
        help="print the unanswerable sample beside the recorded verdicts and stop",
    )
    ap.add_argument("--fit-mix", action="store_true", help="print the specific share and stop")
    args = ap.parse_args()
    if args.fit_mix:
        fit_mix()
        return 0
    if args.review_unanswerable:
        review_unanswerable(args.size)
        return 0
    mix = MIX
    if args.mix:
        names = {v: k for k, v in KINDS.items()}
        mix = {names[k]: float(v) for k, v in (x.split("=") for x in args.mix.split(","))}
    for name in args.corpora.split(","):
        started = time.perf_counter()
        corpus, questions = sub_corpus(name)
        questions = questions[: args.size]
        ts = generate(corpus, len(questions), seed=0, mix=mix)
        if args.write_generated:
            path = Path(args.write_generated.replace("{corpus}", name))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in ts.rows), encoding="utf-8")
        saved = {
            f"generated ({label})": read_rows(path.replace("{corpus}", name))
            for label, path in (spec.split("=", 1) for spec in args.generated)
        }
        print(f"\n== {name}: {len(questions)} hand-written questions, corpus {corpus}")
        shared = statistics.fmean(
            shared_words(q.question, " ".join(q.gold_snippets)) for q in questions
        )
        print(f"hand-written: content words shared with the answer sentence {shared:.2f}")
        for label, rows in {"generated (this code)": ts.rows, **saved}.items():
            med, n = paraphrase_overlap(rows)
            kinds = dict(Counter(r.get("kind", "?") for r in rows))
            shared = statistics.fmean(shared_words(r["user_input"], r["reference"]) for r in rows)
            print(
                f"{label}: {kinds}; paraphrased median 4-gram overlap {med:.2f} (n={n}); "
                f"content words shared with the reference {shared:.2f}"
            )
        if args.only_generate:
            continue
        pipe = bench_pipeline(corpus, WORK / name, args.embeddings)
        hand_items: list[Item] = [
            (q.question, " ".join(q.gold_snippets), "natural", lambda c, q=q: hand_score(c, q))
            for q in questions
        ]
        sets = {"hand-written": hand_items, "generated (this code)": gen_items(ts.rows)}
        sets.update({label: gen_items(rows) for label, rows in saved.items()})
        results = {label: await grid(pipe, items) for label, items in sets.items()}
        report(name, sets, results)
        print(f"({time.perf_counter() - started:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
