"""Add the ``evidence_gap`` sentence column to labelled rows collected before it existed,
without collecting the rows again.

``evidence_gap`` is how far a sentence's passage's judge evidence is below the best evidence
among the passages the answer reads (``sentences.sentence_table``); a fresh
``answer_quality.py --features`` run writes it itself. Every other column is read from the
file: for each question and reader (``who``), the best ``evidence`` among its first ``READ``
passages' rows, then each row's gap to it (0 for naive hybrid's rows, which carry no
evidence). A passage without a quotable sentence has no row, so its evidence is missing from
the best; the bench's rows hold the passages' sentences of four words or more, which nearly
every passage has. A file that already has the column is left unchanged. Usage::

    python bench/_evidence_gap_column.py [--rows bench/data/answer_rows.csv.gz]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from collections import defaultdict
from pathlib import Path

from calibrate import READ

from ragloop.safety import atomic_write_bytes

HERE = Path(__file__).resolve().parent
COLUMN = "evidence_gap"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, default=HERE / "data" / "answer_rows.csv.gz")
    args = ap.parse_args()
    with gzip.open(args.rows, "rt", newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        rows = list(reader)
    if COLUMN in header:
        print(f"{args.rows}: already has {COLUMN}; unchanged")
        return 0
    best: dict[tuple[str, str], float] = defaultdict(float)
    for r in rows:
        if int(r.get("rank") or 1) <= READ:
            key = (r["qid"], r.get("who") or "loop")
            best[key] = max(best[key], float(r["evidence"]))
    at = header.index("evidence") + 1
    buf = io.StringIO()
    writer = csv.DictWriter(buf, header[:at] + [COLUMN] + header[at:], lineterminator="\r\n")
    writer.writeheader()
    for r in rows:
        gap = best[(r["qid"], r.get("who") or "loop")] - float(r["evidence"])
        writer.writerow({**r, COLUMN: round(max(0.0, gap), 4)})
    atomic_write_bytes(args.rows, gzip.compress(buf.getvalue().encode(), mtime=0))
    print(f"{args.rows}: {len(rows)} rows, column {COLUMN} added")
    return 0


if __name__ == "__main__":
    sys.exit(main())
