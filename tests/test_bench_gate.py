"""The frozen-bench gate: the shipped answer model, recomputed on the frozen labelled rows of
the four development corpora, must not leave any corpus's committed interval on the bad side.

The rows and intervals are in ``tests/fixtures/bench_gate`` (``bench/_gate_freeze.py`` writes
them, with the model shipped then). A refit or a hand edit of ``answer_model.json`` that drops
a corpus fails here; one that improves never does. When the features change, collect the rows
again and run ``bench/_gate_freeze.py`` before refitting (see bench/README.md).
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragloop.calibration.gate import FIGURES, check, figures
from ragloop.calibration.rows import read_rows
from ragloop.errors import ConfigError
from ragloop.nodes.answer_model import load_model

GATE = Path(__file__).parent / "fixtures" / "bench_gate"
#: the gates of the other embedding models' shipped fits (``bench_gate.NAME``)
OTHER_GATES = sorted(GATE.parent.glob("bench_gate.*"))


@pytest.fixture(scope="module")
def frozen():
    bounds = json.loads((GATE / "bounds.json").read_text())
    try:
        rows, sha = read_rows(GATE / "rows.csv.gz")
    except ConfigError as exc:  # the features changed since the gate was frozen
        pytest.fail(
            f"{exc}. Collect the rows again (bench/answer_quality.py --features) and freeze the "
            "gate with bench/_gate_freeze.py BEFORE refitting the model"
        )
    assert sha == bounds["provenance"]["rows_sha256"], "rows replaced without gate_freeze.py"
    return rows, bounds


def test_the_shipped_model_stays_inside_every_corpus_interval(frozen):
    rows, bounds = frozen
    assert set(bounds["corpora"]) == {"pg", "py", "sqlite", "bash"}
    assert all(set(f) == set(FIGURES) for f in bounds["corpora"].values())
    model = load_model()
    assert model is not None
    assert check(rows, model, bounds) == []


def test_a_model_that_lost_the_entry_line_feature_fails_on_the_reference_manual(frozen):
    rows, bounds = frozen
    model = load_model()
    broken = replace(model, coef={**model.coef, "name_entry": 0.0})
    failures = check(rows, broken, bounds)
    assert any(f.startswith("pg best_holds_gold") and "below" in f for f in failures), failures


def test_an_abstention_that_ignores_unknown_names_fails_on_unanswerable_questions(frozen):
    """Not found is gated as the answer decides it, by the judged abstention fit: without
    the share of the question's names no chunk holds, it answers questions about things the
    corpus never mentions."""
    rows, bounds = frozen
    model = load_model()
    fit = model.abstain["judged"]
    blind = replace(fit, coef={**fit.coef, "unknown_names": 0.0})
    failures = check(rows, replace(model, abstain={**model.abstain, "judged": blind}), bounds)
    assert any("not_found_unanswerable" in f and "below its interval" in f for f in failures)


def test_a_model_with_its_signs_flipped_fails_on_every_corpus(frozen):
    rows, bounds = frozen
    model = load_model()
    broken = replace(model, coef={k: -v for k, v in model.coef.items()})
    failed = {f.split()[0] for f in check(rows, broken, bounds)}
    assert failed == {"pg", "py", "sqlite", "bash"}


def test_saying_not_found_too_readily_fails_the_gate(frozen):
    rows, bounds = frozen
    model = load_model()
    fit = model.abstain["judged"]
    eager = replace(model, abstain={**model.abstain, "judged": replace(fit, level=0.95)})
    failures = check(rows, eager, bounds)
    assert any("not_found_answerable" in f and "above its interval" in f for f in failures)


def test_a_model_without_an_abstention_fit_is_gated_on_its_best_sentence(frozen):
    rows, bounds = frozen
    model = replace(load_model(), abstain={}, not_found_below=0.5)
    failures = check(rows, model, bounds)
    assert any("not_found_answerable" in f and "above its interval" in f for f in failures)


def test_an_improvement_never_fails_the_gate(frozen):
    rows, bounds = frozen
    model = load_model()
    now = figures(rows, model)
    better = copy.deepcopy(bounds)  # as if the model had been worse when it was frozen
    for corpus, figs in better["corpora"].items():
        for name, side in FIGURES.items():
            v = now[corpus][name]["value"]
            figs[name]["low"], figs[name]["high"] = (
                (v - 0.2, v - 0.1) if side == "low" else (v + 0.1, v + 0.2)
            )
    assert check(rows, model, better) == []


@pytest.mark.parametrize("gate", OTHER_GATES, ids=lambda p: p.name)
def test_every_other_shipped_fit_stays_inside_its_own_gate(gate):
    """Each embedding model's shipped fit is checked on its own frozen rows; flipping its
    signs fails there, so the check can fail."""
    bounds = json.loads((gate / "bounds.json").read_text())
    rows, sha = read_rows(gate / "rows.csv.gz")
    assert sha == bounds["provenance"]["rows_sha256"], "rows replaced without gate_freeze.py"
    fitted_on = bounds["provenance"]["embeddings_model"]
    model = load_model(embeddings_model=fitted_on)
    assert model is not None and model.provenance["embeddings_model"] == fitted_on
    assert model != load_model(), "another embedding model's gate checks the default fit"
    assert check(rows, model, bounds) == []
    broken = replace(model, coef={k: -v for k, v in model.coef.items()})
    assert check(rows, broken, bounds)


def test_the_gate_records_what_it_was_frozen_from():
    p = json.loads((GATE / "bounds.json").read_text())["provenance"]
    rows, _ = read_rows(GATE / "rows.csv.gz")
    assert p["features"] == list(rows.features) and p["questions"] == rows.questions
    assert len(p["model_sha256"]) == 64 and len(p["from_sha256"]) == 64
