"""The labelled sentence rows the answer-model scripts start from (``calibrate.py``,
``_gate_freeze.py``): one command line (``--rows``, ``--out``) and one reading of the rows.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragloop.calibration.rows import SentenceRows, read_rows

HERE = Path(__file__).resolve().parent
#: the committed rows (``answer_quality.py --features`` writes them)
ROWS = HERE / "data" / "answer_rows.csv.gz"


def read_labelled(out: Path) -> tuple[argparse.Namespace, SentenceRows, str]:
    """(arguments, rows, sha256 of the rows file) of ``--rows`` (default ``ROWS``); ``--out``
    defaults to ``out``."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, default=ROWS)
    ap.add_argument("--out", type=Path, default=out)
    args = ap.parse_args()
    rows, sha = read_rows(args.rows)
    return args, rows, sha
