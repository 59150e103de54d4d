"""Freeze the frozen-bench gate (``tests/test_bench_gate.py``): a copy of the labelled sentence
rows and the shipped answer model's per-corpus intervals on them.

Run it when the labelled rows are collected again (new or changed features), BEFORE refitting
the model: the intervals are the model shipped then, and the refit must not leave them on the
bad side (``ragloop.calibration.gate``). Named with ``_`` so ``make bench`` never rewrites the
gate. Usage::

    python bench/_gate_freeze.py [--embeddings minilm|wordllama] [--rows PATH]

The gate holds the rows the loop's answer reads (its first ``READ`` passages), not the deeper
passages or naive hybrid's that the rows file also carries.

Another embedding model's gate (its rows, its shipped fit) is frozen under
``tests/fixtures/bench_gate.NAME``; a fit shipped for the first time is frozen right after it
is fitted (there was no model before it).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from importlib import resources

from _labelled_rows import HERE, read_labelled
from calibrate import embeddings_model, load, read_by

from ragloop.calibration.gate import figures
from ragloop.calibration.rows import write_rows
from ragloop.nodes.answer_model import shipped_fit
from ragloop.safety import atomic_write_text

OUT = HERE.parent / "tests" / "fixtures" / "bench_gate"


def main() -> int:
    args, rows, sha = read_labelled(OUT)
    # the rows file also holds deeper passages and naive hybrid's: the gate keeps what the
    # loop's answer reads (``read_by``; a file without who/rank held only those)
    frozen = rows.select(read_by(load(args.rows)[0], "loop"))
    found = shipped_fit(embeddings_model(args.embeddings))
    if found is None:
        raise SystemExit("no shipped answer model to freeze the gate with")
    name, model = found
    model_bytes = resources.files("ragloop.data").joinpath(name).read_bytes()
    frozen_sha = write_rows(frozen, args.out / "rows.csv.gz")
    bounds = {
        "corpora": figures(frozen, model),
        "provenance": {
            "rows": "rows.csv.gz",
            "rows_sha256": frozen_sha,
            "from": str(args.rows.relative_to(HERE.parent))
            if args.rows.is_absolute()
            else str(args.rows),
            "from_sha256": sha,
            "questions": frozen.questions,
            "model": name,
            "embeddings_model": model.provenance.get("embeddings_model"),
            "model_sha256": hashlib.sha256(model_bytes).hexdigest(),
            "features": list(frozen.features),
            "interval": "Wilson score 95% interval of each share (questions)",
            "frozen_at": time.strftime("%Y-%m-%d"),
        },
    }
    atomic_write_text(args.out / "bounds.json", json.dumps(bounds, indent=1) + "\n")
    for corpus, figs in bounds["corpora"].items():
        for name, f in figs.items():
            shown = f"{f['value']:.3f} [{f['low']:.3f}, {f['high']:.3f}]"
            print(f"{corpus:8} {name:24} {shown} n={f['n']}")
    print(f"wrote {args.out}: {len(frozen)} rows, {frozen.questions} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
