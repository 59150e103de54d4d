"""The order the answer reads kept passages in: the judge's order fused with the order found
(``nodes.reading``), its fitted weights read from a checked data file with provenance."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragloop.errors import ConfigError
from ragloop.nodes.reading import (
    READING_ORDER_FILE,
    ReadingOrder,
    checked_reading_order,
    fitted_reading_order,
    judge_order,
    rank_contexts,
)
from ragloop.state import ContextItem

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from reading_order_fit import order as fitted_order  # noqa: E402


def kept(evidences: list[float], grade: int = 1) -> list[ContextItem]:
    return [
        ContextItem(id=f"c{i}", text="", grade=grade, evidence=e) for i, e in enumerate(evidences)
    ]


def ids(contexts: list[ContextItem]) -> list[str]:
    return [c["id"] for c in contexts]


def test_a_first_retrieval_passage_is_not_pushed_out_of_the_read_k_by_later_rounds() -> None:
    # the first round found c0 (its best passage); three later rounds found seven passages
    # the judge rates a little higher: by the judge alone c0 is read eighth, after k = 5
    contexts = kept([0.50, 0.40, 0.40, 0.40, 0.40, 0.55, 0.56, 0.57, 0.58, 0.59, 0.60, 0.61])
    assert "c0" not in ids(judge_order(contexts)[:5])
    assert "c0" in ids(rank_contexts(contexts, reading=ReadingOrder(k0=2, found_weight=0.5))[:5])
    assert "c0" in ids(rank_contexts(contexts)[:5])  # the shipped fit does the same


def test_weight_zero_or_no_evidence_is_the_judges_order() -> None:
    contexts = kept([0.2, 0.9, 0.5])
    assert rank_contexts(contexts, reading=ReadingOrder()) == judge_order(contexts)
    bare = [ContextItem(id=c["id"], text="", grade=c["grade"]) for c in contexts]  # an LLM judge
    assert rank_contexts(bare, reading=ReadingOrder(k0=1, found_weight=5.0)) == judge_order(bare)


@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=12),
    st.floats(0.5, 60),
    st.floats(0, 3),
)
def test_the_fused_order_is_a_permutation_led_by_a_passage_first_in_both(
    evidences: list[float], k0: float, weight: float
) -> None:
    contexts = kept(evidences)
    out = rank_contexts(contexts, reading=ReadingOrder(k0=k0, found_weight=weight))
    assert sorted(ids(out)) == sorted(ids(contexts))
    if judge_order(contexts)[0] is contexts[0]:  # found first and judged best: read first
        assert out[0] is contexts[0]


def test_the_shipped_order_is_fitted_on_committed_rows_and_won_left_out() -> None:
    data = json.loads(resources.files("ragloop.data").joinpath(READING_ORDER_FILE).read_text())
    prov = data["provenance"]
    assert prov["fitted_by"] == "bench/reading_order_fit.py"
    for path in prov["training_data"].values():
        assert (ROOT / path).is_file(), path
    loco = prov["leave_one_corpus_out"]
    won = sum(v["fitted"] for v in loco.values()) > sum(v["judge_order"] for v in loco.values())
    assert (prov["used"] == "fitted") == won
    assert fitted_reading_order() == ReadingOrder(data["k0"], data["found_weight"])
    if not won:
        assert data["found_weight"] == 0


@pytest.mark.parametrize(
    "bad",
    [[], {"k0": 0, "found_weight": 1}, {"k0": 1, "found_weight": -1}, {"k0": "2"},
     {"k0": True, "found_weight": 0}, {"k0": float("nan"), "found_weight": 0}],
)  # fmt: skip
def test_a_bad_reading_order_file_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match=READING_ORDER_FILE):
        checked_reading_order(bad)


@given(
    st.lists(st.tuples(st.integers(0, 2), st.floats(0, 1)), min_size=1, max_size=12),
    st.sampled_from([1, 2, 5, 10, 60]),
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]),
)
def test_the_fit_replays_the_order_the_answer_reads_in(
    graded: list[tuple[int, float]], k0: int, weight: float
) -> None:
    contexts = [
        ContextItem(id=f"c{i}", text="", grade=g, evidence=e) for i, (g, e) in enumerate(graded)
    ]
    place = {c["id"]: i for i, c in enumerate(judge_order(contexts))}
    rows = [(i, place[c["id"]], i) for i, c in enumerate(contexts)]  # gold column: the id
    replayed = [f"c{p[2]}" for p in fitted_order(rows, k0, weight)]
    assert replayed == ids(rank_contexts(contexts, reading=ReadingOrder(k0, weight)))
