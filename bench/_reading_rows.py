"""Collect the loop's kept passages in the order it found them, with the judge's grade and
evidence and whether each holds the question's gold passage: what ``bench/reading_order_fit.py``
fits the answer's reading order on.

For every answerable question of the four development corpora (``answer_quality.py``'s
corpora and questions) the loop runs as in the bench; the passages its answer step ranks
(``nodes.answer.rank_contexts``'s input: kept passages, first round first, each round in its
retriever's order) are written one row each, with the place the judge's order
(``nodes.reading.judge_order``) gives it. Usage::

    python bench/_reading_rows.py [--embeddings minilm|wordllama] [--out PATH]

Default output: ``bench/data/reading_rows.csv.gz`` (``reading_rows.NAME.csv.gz`` for another
embedding model). Needs the Debian doc packages (installed with apt-get when run as root).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import gzip
import hashlib
import io
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from _labelled_rows import named
from _loopbench import bench_pipeline
from _quality_measure import _hit, loop
from answer_quality import corpus

import ragloop.nodes.answer as answer_node

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "reading_rows.csv.gz"
COLUMNS = ("corpus", "qid", "kind", "found", "place", "grade", "evidence", "gold")


async def collect(embeddings: str, writer: Any) -> int:
    seen: dict[str, Any] = {}
    ranked = answer_node.rank_contexts

    def spy(contexts: list[Any], *args: Any, **kwargs: Any) -> Any:
        seen["found"] = list(contexts)
        judged = answer_node.judge_order(contexts, *args)
        seen["place"] = {id(c): i for i, c in enumerate(judged)}
        return ranked(contexts, *args, **kwargs)

    answer_node.rank_contexts = spy  # the answer node looks it up at call time
    n = 0
    try:
        for name in ("pg", "py", "sqlite", "bash"):
            root, work, questions = corpus(name, 30, 40)
            pipe = bench_pipeline(root, work, None if embeddings == "minilm" else embeddings)
            pipe.context = replace(pipe.context, retrieval="always")
            for q in questions:
                seen.clear()
                await loop(pipe, q.question)
                qid = hashlib.sha1(f"{name}/{q.question}".encode()).hexdigest()[:10]
                for i, c in enumerate(seen.get("found", [])):
                    writer.writerow(
                        [name, qid, q.kind, i, seen["place"][id(c)], int(c.get("grade", 0)),
                         round(float(c.get("evidence", 0.0)), 4), int(_hit([c], q))]
                    )  # fmt: skip
                    n += 1
            print(f"  {name}: {len(questions)} questions", file=sys.stderr)
    finally:
        answer_node.rank_contexts = ranked
    return n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embeddings", default="minilm", choices=("minilm", "wordllama"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or named(OUT, args.embeddings)
    # no time stamp in the gzip header: the same rows give the same bytes (and sha256)
    with gzip.GzipFile(out, "wb", mtime=0) as raw, io.TextIOWrapper(raw, newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        rows = asyncio.run(collect(args.embeddings, writer))
    print(f"{rows} rows -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
