"""Add the question columns (``_quality_measure.QUESTION_COLUMNS``) to labelled rows collected
before they existed, without collecting the sentence rows again.

A fresh ``answer_quality.py --features`` run writes them itself; this fills them into a
committed rows file so the sentence features (and with them the sentence model a refit gives)
stay exactly as they were. Each row's question is found by its ``qid`` (the sha1 of
"corpus/question", as ``answer_quality.py`` writes it) among the bench's questions of its
corpus, and the column is computed by that corpus's bench pipeline (its index is built on
first use). A row whose question is not found is reported and the file is left unchanged.
Usage::

    python bench/_question_columns.py [--rows bench/data/answer_rows.csv.gz]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import sys
from pathlib import Path

from _loopbench import bench_pipeline
from _quality_measure import QUESTION_COLUMNS
from answer_quality import corpus, unanswerable_questions

from ragloop.safety import atomic_write_bytes

HERE = Path(__file__).resolve().parent


def qid(name: str, question: str) -> str:
    return hashlib.sha1(f"{name}/{question}".encode()).hexdigest()[:10]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, default=HERE / "data" / "answer_rows.csv.gz")
    ap.add_argument("--limit", type=int, default=30)
    ap.add_argument("--natural", type=int, default=40)
    args = ap.parse_args()
    with gzip.open(args.rows, "rt", newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        rows = list(reader)
    values: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(r["corpus"] for r in rows):
        root, work, qs = corpus(name, args.limit, args.natural)
        answerer = bench_pipeline(root, work, None).deps.answerer
        for text in [q.question for q in qs] + unanswerable_questions(name):
            values[qid(name, text)] = {"unknown_names": answerer.unknown_names(text)}
    missing = sorted({r["qid"] for r in rows} - set(values))
    if missing:
        print(
            f"{len(missing)} question(s) not found, e.g. {missing[:3]}; unchanged", file=sys.stderr
        )
        return 1
    out_header = header + [c for c in QUESTION_COLUMNS if c not in header]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, out_header)
    writer.writeheader()
    for r in rows:
        writer.writerow({**r, **{c: round(values[r["qid"]][c], 4) for c in QUESTION_COLUMNS}})
    atomic_write_bytes(args.rows, gzip.compress(buf.getvalue().encode(), mtime=0))
    print(f"{args.rows}: {len(rows)} rows, columns {', '.join(QUESTION_COLUMNS)} filled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
