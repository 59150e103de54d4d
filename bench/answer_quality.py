"""Does the user's answer carry what the loop found? Four development corpora of four genres,
and two held out.

PostgreSQL (DocBook HTML), the Python library (Sphinx), SQLite (hand-written HTML) and the bash
manual (one texinfo HTML page), each from its Debian package (installed with apt-get when run
as root); and, held out of every fit, the Rust book (an mdBook guide, ``rust-doc``) and 62
command man pages converted to HTML by mandoc (``man``). Per
corpus, pooled over the development corpora, and for each held-out one on its own, with
bootstrap 95% intervals: hybrid@k, the singles' oracle, the loop's kept / kept@k / cited
passage hits, whether the answer text holds the gold passage (loop against naive hybrid RAG
with the same answer step), "not found" on answerable and on unanswerable questions, answers
quoting boilerplate, TOC lines or bare code, and the loop's p50/p95 latency over naive
hybrid's (see bench/_quality_measure.py). Usage::

    python bench/answer_quality.py [--limit 30] [--corpora pg,py,sqlite,bash,book,man]
        [--rows out.jsonl] [--embeddings wordllama] [--features rows.csv.gz]

``--limit`` caps the named and the paraphrase/description questions per corpus; every
hand-written natural (up to ``--natural``) and unanswerable question is asked.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import gzip
import hashlib
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import _newdocs
import _pgdocs
import _pydocs
import numpy as np
from _loopbench import bench_pipeline
from _quality_measure import (
    QUESTION_COLUMNS,
    ROW_COLUMNS,
    answerable,
    boilerplate_sentences,
    bootstrap,
    flaws,
    unanswerable,
)

from ragloop.nodes.answer import NOT_FOUND

try:
    from ragloop.nodes.sentences import FEATURES
except ImportError:  # pragma: no cover - measuring an older checkout
    FEATURES = ()

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".ragloop" / "bench"


#: each corpus's pages: the natural questions' gold pages, the pages its entries are drawn from,
#: then the smallest other pages up to this many (a bounded index: minutes to build on 2 cores)
PAGES = 60
NATURAL = {"pg": "pgdocs_natural", "py": "pydocs_natural"}
#: corpora measured but never fitted on: their rows are not written to ``--features``, and the
#: report shows them beside the development corpora's pooled figure, not inside it
HELD_OUT = ("book", "man")
ENTRY_PAGES = {
    "sqlite": {"lang_corefunc.html", "lang_aggfunc.html", "lang_datefunc.html",
               "lang_mathfunc.html", "pragma.html"},
}  # fmt: skip


def bounded(name: str, pages: list[Path], natural: int, n: int = PAGES) -> list[Path]:
    """The first ``natural`` hand-written questions' gold pages and the entry pages, then the
    smallest others, at most ``n`` pages (at least the former)."""
    path = HERE / "data" / f"{NATURAL.get(name, name + '_natural')}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    lines = [line for line in lines if line.strip()][:natural]
    must = {json.loads(line)["gold_page"] for line in lines}
    must |= ENTRY_PAGES.get(name, set())
    must |= _newdocs.entry_pages(name)  # the gold pages of hand-written named questions
    first = [p for p in pages if p.name in must]
    rest = sorted((p for p in pages if p.name not in must), key=lambda p: p.stat().st_size)
    return sorted(first + rest[: max(0, n - len(first))])


def corpus(
    name: str, limit: int, natural: int, n_pages: int = PAGES
) -> tuple[Path, Path, list[Any]]:
    """(corpus folder, bench work folder, questions) of one corpus of at most ``n_pages``
    pages (its own work folder when that is not the default ``PAGES``)."""
    work = WORK / (f"quality-{name}" if n_pages == PAGES else f"quality-{name}-{n_pages}p")
    dest = work / "corpus"
    if name == "pg":
        pages = bounded(name, _pgdocs.select_pages(_pgdocs.corpus_root()), natural, n_pages)
        root = _pgdocs.place_pages(pages, dest, "bench/answer_quality.py")
        caps = {"named": limit, "paraphrase": limit, "natural": natural}
        return root, work, _pgdocs.load_questions(root, per_kind=caps)
    if name == "py":
        pages = bounded(name, _pydocs.select_pages(_pydocs.corpus_root()), natural, n_pages)
        root = _pydocs.place_pages(pages, dest, "bench/answer_quality.py")
        qs = _pydocs.load_questions(root, per_kind=max(limit, natural))
        return root, work, _cap(qs, limit, natural)
    root_of, pages_of, _ = _newdocs.CORPORA[name]
    pages = bounded(name, pages_of(root_of()), natural, n_pages)
    root = _pgdocs.place_pages(pages, dest, "bench/answer_quality.py")
    qs = _newdocs.load_questions(name, root, per_kind=limit)
    return root, work, _cap(qs, limit, natural)


def _cap(qs: list[Any], limit: int, natural: int) -> list[Any]:
    out, seen = [], dict[str, int]()
    for q in qs:
        seen[q.kind] = seen.get(q.kind, 0) + 1
        if seen[q.kind] <= (natural if q.kind == "natural" else limit):
            out.append(q)
    return out


def unanswerable_questions(name: str) -> list[str]:
    path = HERE / "data" / f"{name}_unanswerable.jsonl"
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


METRICS = [  # (label, row key or function, which rows: "a" answerable / "u" unanswerable)
    ("hybrid@k", "hybrid", "a"),
    ("oracle", "oracle", "a"),
    ("kept", "kept", "a"),
    ("kept@k", "kept5", "a"),
    ("cited", "cited", "a"),
    ("gold in answer: loop", "loop_gold", "a"),
    ("gold in answer: naive", "naive_gold", "a"),
    ("loop - naive", lambda r: float(r["loop_gold"]) - float(r["naive_gold"]), "a"),
    ("not found, answerable: loop", "loop_nf", "a"),
    ("not found, answerable: naive", "naive_nf", "a"),
    ("not found, unanswerable: loop", "loop_nf", "u"),
    ("not found, unanswerable: naive", "naive_nf", "u"),
]
FLAWS = ("boilerplate", "toc", "code")


def values(rows: list[dict[str, Any]], key: Any, which: str) -> list[float]:
    rs = [r for r in rows if r["unanswerable"] == (which == "u")]
    return [float(key(r) if callable(key) else r[key]) for r in rs]


def columns(names: list[str]) -> list[tuple[str, list[str]]]:
    """(header, corpora) of each report column: the development corpora, pooled over them,
    then each held-out corpus (``HELD_OUT``: measured here, never fitted on) on its own."""
    dev = [n for n in names if n not in HELD_OUT]
    held = [n for n in names if n in HELD_OUT]
    pooled = [("pooled", dev)] if dev else []
    return [(n, [n]) for n in dev] + pooled + [(f"{n} (held out)", [n]) for n in held]


def report(by_corpus: dict[str, list[dict[str, Any]]], k: int) -> None:
    cols = columns(list(by_corpus))
    width = max(22, *(len(h) + 2 for h, _ in cols))
    print(f"\nanswer quality (k = {k}); each cell: mean [bootstrap 95% interval]")
    print(f"{'':<32}" + "".join(f"{h:>{width}}" for h, _ in cols))

    def rows_of(names: list[str]) -> list[dict[str, Any]]:
        return [r for n in names for r in by_corpus[n]]

    counts = [
        f"{sum(not r['unanswerable'] for r in rows_of(ns))}/"
        f"{sum(bool(r['unanswerable']) for r in rows_of(ns))}"
        for _, ns in cols
    ]
    print(f"{'questions (answerable/unans.)':<32}" + "".join(f"{c:>{width}}" for c in counts))
    for label, key, which in METRICS:
        cells = []
        for _, ns in cols:
            groups = [values(by_corpus[n], key, which) for n in ns]
            flat = [x for part in groups for x in part]
            if not flat:
                cells.append(f"{'-':>{width}}")
                continue
            lo, hi = bootstrap(groups)
            cells.append(f"{statistics.mean(flat):>7.3f} [{lo:.2f},{hi:.2f}]".rjust(width))
        print(f"{label:<32}" + "".join(cells))
    ratio = []
    for _, ns in cols:
        rs = [r for r in rows_of(ns) if not r["unanswerable"]]
        kept = sum(r["kept"] for r in rs)
        ratio.append(f"{sum(r['cited'] for r in rs) / kept:.2f}" if kept else "-")
    print(f"{'cited / kept':<32}" + "".join(f"{x:>{width}}" for x in ratio))
    for who in ("loop", "naive"):
        for f in FLAWS:
            per = [sum(r.get(f"{who}_{f}", False) for r in rows_of(ns)) for _, ns in cols]
            label = f"answers quoting {f}: {who}"
            print(f"{label:<32}" + "".join(f"{x:>{width}}" for x in per))
    for p in (0.5, 0.95):
        cells = []
        for _, ns in cols:
            pairs = [(r["loop_ms"], r["naive_ms"]) for r in rows_of(ns) if "loop_ms" in r]
            if not pairs:
                cells.append(f"{'-':>{width}}")
                continue
            loop_p, naive_p = (float(np.quantile([x[i] for x in pairs], p)) for i in (0, 1))
            cells.append(f"{loop_p / naive_p:.2f} ({loop_p:.0f}/{naive_p:.0f} ms)".rjust(width))
        print(f"{f'latency p{round(p * 100)}: loop / naive':<32}" + "".join(cells))
    report_kinds(by_corpus)
    for n in by_corpus:
        stops: dict[str, int] = {}
        for r in by_corpus[n]:
            stops[r["stop"]] = stops.get(r["stop"], 0) + 1
        print(f"  {n} stop reasons: {stops}")


#: the per-kind table's columns: (header, row key or function), answerable questions only
KIND_METRICS = [
    ("hybrid@k", "hybrid"),
    ("oracle", "oracle"),
    ("kept", "kept"),
    ("kept@k", "kept5"),
    ("cited", "cited"),
    ("loop", "loop_gold"),
    ("naive", "naive_gold"),
    ("nf loop", "loop_nf"),
]


def report_kinds(by_corpus: dict[str, list[dict[str, Any]]]) -> None:
    """The answerable questions by kind (named, description, paraphrase, natural): passage
    hits, gold in the answer (loop, naive) and loop - naive with its bootstrap interval
    (resampled within each corpus), "not found", and whether kept >= the singles' oracle -
    0.02 (a target per kind). Development corpora pooled, each held-out corpus apart."""
    for header, names in columns(list(by_corpus)):
        if header != "pooled" and not header.endswith("(held out)"):
            continue
        rows = [r for n in names for r in by_corpus[n] if not r["unanswerable"]]
        kinds = list(dict.fromkeys(r["kind"] for r in rows))
        print(f"\nby kind, {header}: answerable questions; loop / naive = gold in the answer")
        print(
            f"{'kind':<13}{'n':>4}" + "".join(f"{h:>10}" for h, _ in KIND_METRICS)
            + f"{'loop - naive':>22}{'kept >= oracle - 0.02':>23}"
        )  # fmt: skip
        for kind in kinds:
            groups = [
                [r for r in by_corpus[n] if not r["unanswerable"] and r["kind"] == kind]
                for n in names
            ]
            flat = [r for g in groups for r in g]
            mean = {key: statistics.mean(float(r[key]) for r in flat) for _, key in KIND_METRICS}
            diff = [[float(r["loop_gold"]) - float(r["naive_gold"]) for r in g] for g in groups]
            lo, hi = bootstrap(diff)
            print(
                f"{kind:<13}{len(flat):>4}" + "".join(f"{m:>10.3f}" for m in mean.values())
                + f"{mean['loop_gold'] - mean['naive_gold']:>+10.3f} [{lo:+.2f},{hi:+.2f}]"
                + f"{'yes' if mean['kept'] >= mean['oracle'] - 0.02 else 'NO':>23}"
            )  # fmt: skip


def rows_by_corpus(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of a --rows file by corpus, code and TOC quotes recounted from the answers."""
    out: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        # a run with nothing kept says NOT_FOUND (older checkouts did not flag it)
        r["loop_nf"] = r["loop_nf"] or r.get("answer", "").startswith(NOT_FOUND)
        for who in ("loop", "naive"):
            if f"{who}_answer" in r or who == "loop":
                text = r.get(f"{who}_answer", r.get("answer", ""))
                r.update(
                    {f"{who}_{f}": v for f, v in flaws(text, set()).items() if f != "boilerplate"}
                )
        out.setdefault(r["corpus"], []).append(r)
    return out


async def run_corpus(
    name: str, args: argparse.Namespace, rows_out: Any, features_out: Any = None
) -> list[dict[str, Any]]:
    started = time.perf_counter()
    root, work, qs = corpus(name, args.limit, args.natural, args.pages)
    pipe = bench_pipeline(root, work, args.embeddings)
    pipe.context = replace(pipe.context, retrieval="always")  # no closed-book draft here
    boiler = boilerplate_sentences(pipe)
    unans = unanswerable_questions(name)[: args.natural]
    kinds = ", ".join(
        f"{k}={sum(q.kind == k for q in qs)}" for k in dict.fromkeys(q.kind for q in qs)
    )
    print(f"{name}: {pipe.describe_sources()}; {kinds}, unanswerable={len(unans)}", file=sys.stderr)
    rows = []
    for q in qs:
        row = await answerable(pipe, q, boiler)
        rows.append({"corpus": name, "question": q.question, **row})
    for text in unans:
        rows.append({"corpus": name, "question": text, **await unanswerable(pipe, text, boiler)})
    for r in rows:
        sentences = r.pop("sentences", [])
        if rows_out:
            rows_out.write(json.dumps(r) + "\n")
        if features_out is not None:
            qid = hashlib.sha1(f"{name}/{r['question']}".encode()).hexdigest()[:10]
            for s in sentences if name not in HELD_OUT else ():
                features_out.writerow([name, qid, r["kind"], int(r["unanswerable"]), *s])
    print(
        f"  {name}: {len(rows)} questions in {time.perf_counter() - started:.0f} s", file=sys.stderr
    )
    return rows


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="pg,py,sqlite,bash,book,man")
    ap.add_argument("--limit", type=int, default=30, help="named and paraphrase questions each")
    ap.add_argument("--natural", type=int, default=40, help="natural / unanswerable cap")
    ap.add_argument("--embeddings", default=None)
    ap.add_argument(
        "--pages",
        type=int,
        default=PAGES,
        help=f"pages per corpus (default {PAGES}: minutes to index; more is closer to a "
        "real manual's size, with its own index folder)",
    )
    ap.add_argument("--rows", default="", help="write every question's row here (JSON lines)")
    ap.add_argument(
        "--report-from",
        default="",
        help="print the report of a --rows file instead of running (quoted flaws recounted)",
    )
    ap.add_argument(
        "--features", default="", help="write the labelled sentence rows here (CSV, .gz)"
    )
    args = ap.parse_args()
    if args.report_from:
        report(rows_by_corpus(Path(args.report_from)), 5)
        return 0
    features_file = gzip.open(args.features, "wt", newline="") if args.features else None  # noqa: SIM115
    features_out = csv.writer(features_file) if features_file else None
    if features_out:
        features_out.writerow(
            ["corpus", "qid", "kind", "unanswerable", *ROW_COLUMNS, *FEATURES, *QUESTION_COLUMNS]
        )
    by_corpus: dict[str, list[dict[str, Any]]] = {}
    rows_out = open(args.rows, "w", encoding="utf-8") if args.rows else None  # noqa: SIM115
    k = 5
    try:
        for name in args.corpora.split(","):
            try:
                by_corpus[name] = await run_corpus(name, args, rows_out, features_out)
            except (_pgdocs.PgDocsMissing, _pydocs.PyDocsMissing, _newdocs.DocsMissing) as exc:
                print(f"{name}: skipped ({exc})")
    finally:
        if rows_out:
            rows_out.close()
        if features_file:
            features_file.close()
    if by_corpus:
        report(by_corpus, k)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
