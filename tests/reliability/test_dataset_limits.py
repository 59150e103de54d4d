"""Dataset limits apply before a cell is parsed; a bad row is reported and skipped, never fatal."""

from __future__ import annotations

import csv
import tracemalloc

from ragloop.eval.schema import EvaluationDataset

GOOD = {"user_input": "q", "response": "a", "retrieved_contexts": '["c"]', "reference": "a"}


def _write(path, cells: list[str]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=list(GOOD))
        out.writeheader()
        out.writerow(GOOD)
        for cell in cells:
            out.writerow({**GOOD, "retrieved_contexts": cell})
        out.writerow(GOOD)


def test_a_deeply_nested_cell_is_one_bad_row(tmp_path, ledger):
    path = tmp_path / "deep.csv"
    _write(path, ["[" * 100_000 + "]" * 100_000, "{" * 50_000])
    ds = EvaluationDataset.from_csv(path)
    ok = len(ds.samples) == 2 and len(ds.errors) == 2
    ledger("dataset limits: deeply nested CSV cell", 2, int(not ok))
    assert ok, ds.errors
    assert "nested too deeply" in ds.errors[0].reason or "list" in ds.errors[0].reason


def test_a_huge_cell_is_refused_before_it_is_parsed(tmp_path, ledger):
    """A 3 MB Python-literal cell: ``literal_eval`` would take ~250x that in memory."""
    path = tmp_path / "huge.csv"
    _write(path, ["[" + ", ".join(["'x'"] * 600_000) + "]"])
    tracemalloc.start()
    try:
        ds = EvaluationDataset.from_csv(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    ok = len(ds.samples) == 2 and len(ds.errors) == 1 and peak < 20 * size
    ledger("dataset limits: huge CSV cell, memory before the cap", 1, int(not ok))
    assert ok, (peak, size, ds.errors)
    assert "too large" in ds.errors[0].reason
