"""The labelled sentence rows the answer-model scripts start from (``calibrate.py``,
``_gate_freeze.py``): one command line (``--embeddings``, ``--rows``, ``--out``,
``--without``) and one reading of the rows.

Rows collected with the default embeddings (MiniLM) are ``data/answer_rows.csv.gz``; with
another local model NAME (``answer_quality.py --embeddings NAME --features ...``) they are
``data/answer_rows.NAME.csv.gz``: cosines are on each model's own scale, so each gets its fit.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ragloop.calibration.rows import SentenceRows, read_rows
from ragloop.nodes.sentences import FEATURES

HERE = Path(__file__).resolve().parent
#: the committed rows (``answer_quality.py --features`` writes them)
ROWS = HERE / "data" / "answer_rows.csv.gz"
#: the embeddings the bench and ``ROWS`` use by default
DEFAULT_EMBEDDINGS = "minilm"


def named(path: Path, embeddings: str) -> Path:
    """``path`` for rows or a fit of ``embeddings``: ``x.csv.gz`` -> ``x.NAME.csv.gz`` (the
    default embeddings keep the plain name)."""
    if embeddings == DEFAULT_EMBEDDINGS:
        return path
    stem, dot, rest = path.name.partition(".")
    return path.with_name(f"{stem}.{embeddings}{dot}{rest}" if dot else f"{stem}.{embeddings}")


def read_labelled(out: Path) -> tuple[argparse.Namespace, SentenceRows, str]:
    """(arguments, rows, sha256 of the rows file) of ``--rows`` (default ``ROWS``, named for
    ``--embeddings``); ``--out`` defaults to ``out`` named for ``--embeddings``."""
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--embeddings",
        default=DEFAULT_EMBEDDINGS,
        choices=("minilm", "wordllama"),
        help="the local embedding model the rows were collected with",
    )
    ap.add_argument("--rows", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--without",
        action="append",
        default=[],
        choices=FEATURES,
        metavar="FEATURE",
        help="leave this feature out of the fit (its column read as 0; repeatable): how a "
        "model fitted before the feature existed is reproduced from rows that have it",
    )
    args = ap.parse_args()
    args.rows = args.rows or named(ROWS, args.embeddings)
    args.out = args.out or named(out, args.embeddings)
    rows, sha = read_rows(args.rows)
    left_out(rows.x, rows.features, args.without)
    return args, rows, sha


def left_out(x: np.ndarray, features: tuple[str, ...], without: list[str]) -> None:
    """Zero the columns of ``x`` (rows x ``features``) named in ``without``, in place: a
    column of zeros gets no weight in the fit, as if the feature did not exist."""
    for name in without:
        x[:, features.index(name)] = 0.0
