"""The judge's shipped weights (``judge_calibration.json``) and the fit that writes them
(``bench/judge_fit.py``): the fit scores exactly the evidence formula the judge uses, and a
bad file is refused with a clear error."""

from __future__ import annotations

import csv
import gzip
import json
import sys
from dataclasses import asdict
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.errors import ConfigError
from ragloop.nodes.evidence import Lexical
from ragloop.nodes.offline_judge import (
    CALIBRATION_FILE,
    JudgeCalibration,
    calibration_for,
    checked_calibrations,
    score,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import judge_fit  # noqa: E402

UNIT = st.floats(0, 1, allow_nan=False)
NAMES = st.lists(st.tuples(UNIT, UNIT), max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(
        st.tuples(st.floats(-1, 1, allow_nan=False), UNIT, UNIT, NAMES, st.booleans()),
        min_size=2,
        max_size=6,
    ),
    low=st.sampled_from(judge_fit.GRID["cos_low"]),
    w=st.tuples(*(st.sampled_from(judge_fit.GRID[k]) for k in ("w_semantic", "w_name"))),
    nit=st.sampled_from(judge_fit.GRID["name_in_text"]),
)
def test_the_fit_scores_the_judges_own_evidence_formula(chunks, low, w, nit) -> None:
    cal = JudgeCalibration(
        cos_low=low, cos_high=0.8, w_semantic=w[0], w_name=w[1], name_in_text=nit
    )
    rows = []
    for n, (cos, sent, head, names, gold) in enumerate(chunks):
        rows.append(
            {
                "corpus": "c", "qid": "q", "kind": "named", "chunk": str(n),
                "label": "1" if gold or n == 0 else "0", "cos": str(cos), "sentence": str(sent),
                "heading": str(head), "names": str(len(names)),
                "names_heading": ";".join(str(h) for h, _ in names),
                "names_text": ";".join(str(t) for _, t in names),
            }
        )  # fmt: skip
    table = judge_fit.Table(rows)
    got = table.evidence(cal)[0, : len(chunks)]
    for (cos, sent, head, names, _), value in zip(chunks, got, strict=True):
        lex = Lexical(sent, head, tuple(h for h, _ in names), tuple(t for _, t in names), 0, ())
        assert value == pytest.approx(score(cal, bool(names), cos, lex).score, abs=1e-9)


def test_the_shipped_weights_come_from_the_fit_file_with_provenance() -> None:
    data = json.loads(resources.files("ragloop.data").joinpath(CALIBRATION_FILE).read_text())
    assert {"minilm", "wordllama"} <= set(data)
    for spec, entry in data.items():
        cal = calibration_for(spec)
        for key, value in entry.items():
            if key != "provenance":
                assert asdict(cal)[key] == value, (spec, key)
        prov = entry["provenance"]
        assert len(prov["sha256"]) == 64 and prov["questions"] > 100
        rows = ROOT / prov["training_data"]
        with gzip.open(rows, "rt", newline="") as fh:
            assert {"label", "cos", "sentence"} <= set(next(csv.reader(fh)))
        mean = prov["leave_one_corpus_out_mean"]
        if prov["chosen"] == "fitted":  # a fit is used only when it wins on unseen corpora
            assert mean["fitted"] >= mean["previous"]


@pytest.mark.parametrize(
    "data, why",
    [
        ([], "expected an object"),
        ({"minilm": 3}, "expected an object of weights"),
        ({"minilm": {"w_name": 1.5}}, "w_name"),
        ({"minilm": {"grade1": "0.1"}}, "grade1"),
        ({"minilm": {"w_semantic": True}}, "w_semantic"),
        ({"minilm": {"cos_low": 0.8, "cos_high": 0.5}}, "cos_low must be below"),
    ],
)
def test_a_bad_calibration_file_is_refused_clearly(data, why) -> None:
    with pytest.raises(ConfigError, match=why):
        checked_calibrations(data)


def test_unknown_keys_and_grade2_in_the_file_are_not_read() -> None:
    got = checked_calibrations({"x": {"grade2": 0.1, "note": "hi", "w_name": 0.2}})["x"]
    assert got.grade2 == JudgeCalibration().grade2 and got.w_name == 0.2


def test_the_drop_level_drops_at_most_the_allowed_share_of_gold_chunks() -> None:
    rng = np.random.default_rng(0)
    rows = [
        {
            "corpus": "c", "qid": f"q{i // 5}", "kind": "named", "chunk": str(i),
            "label": str(int(i % 5 == 0)), "cos": f"{rng.uniform(0, 1):.3f}",
            "sentence": f"{rng.uniform(0, 1):.3f}", "heading": "0", "names": "0",
            "names_heading": "", "names_text": "",
        }
        for i in range(500)
    ]  # fmt: skip
    table = judge_fit.Table(rows)
    ev = table.evidence(JudgeCalibration())
    level = judge_fit.drop_level(table, ev)
    assert (ev[table.label] < level).mean() <= judge_fit.DROP_GOLD
