"""Labelled sentence rows: what the answer step read for a question, and which sentence held
the answer.

One row per sentence: its corpus, question id, question kind, whether the question is
unanswerable, its label (the sentence holds the question's reference), whether it may not be
quoted (``flawed``: code, TOC line, boilerplate) and its ``sentences.FEATURES``. Stored as CSV
(gzipped when the name ends in ``.gz``), the form ``bench/answer_quality.py --features``
writes; the columns are read by name, so a file with other or more features is read for the
features the running ragloop knows, and one that lacks some is refused. The held-out split
(``held_mask``) is by question, a stable hash of seed and question id, so every row of a
question falls on the same side.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragloop.errors import ConfigError
from ragloop.nodes.sentences import FEATURES
from ragloop.safety.atomic import atomic_write_bytes

META = ("corpus", "qid", "kind", "unanswerable", "label", "flawed")
#: the question column the abstention fit reads besides the sentence scores
UNKNOWN = "unknown_names"
#: questions held out of the fit (by a hash of seed and question id)
HELD = 0.3
SEED = 0


def held_out(qid: str, seed: int = SEED, share: float = HELD) -> bool:
    """Whether question ``qid`` is held out of the fit (a stable hash of seed and id)."""
    return hashlib.sha1(f"{seed}/{qid}".encode()).digest()[0] < 256 * share


def held_mask(qids: Iterable[object], seed: int = SEED) -> np.ndarray:
    """The held-out split of rows (or questions) by their question ids: True where held out."""
    return np.array([held_out(str(q), seed) for q in qids], dtype=bool)


@dataclass
class SentenceRows:
    """Labelled sentence rows as arrays (one entry per sentence)."""

    features: tuple[str, ...]
    x: np.ndarray
    label: np.ndarray
    flawed: np.ndarray
    unanswerable: np.ndarray
    qid: np.ndarray
    corpus: np.ndarray
    kind: np.ndarray
    #: each row's question's ``unknown_names`` (a question column; 0 in files without it)
    unknown: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if len(self.unknown) != len(self.label):
            self.unknown = np.zeros(len(self.label))

    def __len__(self) -> int:
        return len(self.label)

    @property
    def questions(self) -> int:
        return len(set(self.qid.tolist()))

    @classmethod
    def from_records(
        cls, records: list[dict[str, object]], features: tuple[str, ...] = FEATURES
    ) -> SentenceRows:
        """Rows from dicts holding ``META`` and the features by name."""
        missing = [f for f in (*META, *features) if records and f not in records[0]]
        if missing:
            raise ConfigError(
                f"sentence rows lack the column(s) {', '.join(missing)}: they were written "
                "by another ragloop version; collect them again"
            )
        try:
            x = np.array([[float(str(r[f])) for f in features] for r in records], dtype=float)
        except ValueError as exc:
            raise ConfigError(f"sentence rows: a feature is not a number ({exc})") from None
        if not np.isfinite(x).all():
            raise ConfigError("sentence rows: a feature is not a finite number")

        def flag(name: str) -> np.ndarray:
            return np.array([str(r[name]) in ("1", "True", "true") for r in records], dtype=bool)

        return cls(
            features=tuple(features),
            x=x.reshape(len(records), len(features)),
            label=flag("label"),
            flawed=flag("flawed"),
            unanswerable=flag("unanswerable"),
            qid=np.array([str(r["qid"]) for r in records], dtype=object),
            corpus=np.array([str(r["corpus"]) for r in records], dtype=object),
            kind=np.array([str(r["kind"]) for r in records], dtype=object),
            unknown=np.array([float(str(r.get(UNKNOWN) or 0)) for r in records], dtype=float),
        )

    def select(self, mask: np.ndarray) -> SentenceRows:
        return SentenceRows(
            self.features,
            self.x[mask],
            self.label[mask],
            self.flawed[mask],
            self.unanswerable[mask],
            self.qid[mask],
            self.corpus[mask],
            self.kind[mask],
            self.unknown[mask],
        )

    def to_csv(self) -> str:
        """The rows as CSV text (header ``META``, the features, then ``unknown_names``)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow([*META, *self.features, UNKNOWN])
        for i in range(len(self)):
            w.writerow(
                [
                    self.corpus[i],
                    self.qid[i],
                    self.kind[i],
                    int(self.unanswerable[i]),
                    int(self.label[i]),
                    int(self.flawed[i]),
                    *(round(float(v), 4) for v in self.x[i]),
                    round(float(self.unknown[i]), 4),
                ]
            )
        return out.getvalue()


def read_rows(path: str | Path, features: tuple[str, ...] = FEATURES) -> tuple[SentenceRows, str]:
    """(rows, sha256 of the file's bytes) of a rows CSV (gzipped when it ends in ``.gz``)."""
    path = Path(path)
    data = path.read_bytes()
    text = gzip.decompress(data).decode("utf-8") if path.suffix == ".gz" else data.decode("utf-8")
    records = list(csv.DictReader(io.StringIO(text)))
    if not records:
        raise ConfigError(f"{path}: no sentence rows")
    return SentenceRows.from_records(records, features), hashlib.sha256(data).hexdigest()  # type: ignore[arg-type]


def rows_bytes(rows: SentenceRows, gz: bool = True) -> bytes:
    """The rows as a file's bytes: CSV, gzipped reproducibly (no time stamp) with ``gz``."""
    data = rows.to_csv().encode("utf-8")
    return gzip.compress(data, mtime=0) if gz else data


def write_rows(rows: SentenceRows, path: str | Path) -> str:
    """Write the rows atomically (gzipped for ``.gz``); the sha256 of the bytes written."""
    path = Path(path)
    data = rows_bytes(rows, gz=path.suffix == ".gz")
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()
