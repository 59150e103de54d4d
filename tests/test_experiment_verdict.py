"""The verdict: a paired test against the best, and the cheapest configuration within the noise."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.experiments.objective import Constraint, Objective
from ragloop.experiments.verdict import METHOD, decide, paired_bootstrap

METRIC = "answer_relevancy"


def grid(per_config: dict[str, list[float]], calls: dict[str, float]) -> tuple[list, dict]:
    """results.csv records and rows.jsonl rows for configurations with these scores."""
    records, rows = [], {}
    for cid, values in per_config.items():
        records.append(
            {
                "config": cid,
                METRIC: float(np.nanmean(values)),
                "llm_calls_per_question": calls[cid],
                "latency_p50_ms": 100.0,
                "tokens_per_question": 0.0,
                "mean_iterations": 1.0,
            }
        )
        rows[cid] = [{"index": i, "metrics": {METRIC: v}} for i, v in enumerate(values)]
    return records, rows


def test_best_inside_the_noise_gives_way_to_the_cheapest():
    rng = np.random.default_rng(1)
    base = rng.uniform(0, 1, 60)
    noise = rng.normal(0, 0.2, 60)
    records, rows = grid({"c1": list(base + noise), "c2": list(base)}, {"c1": 4.0, "c2": 1.0})
    assert records[0][METRIC] != records[1][METRIC]
    best = max(records, key=lambda r: r[METRIC])["config"]
    chosen, text = decide(records, rows, Objective(METRIC, True), [METRIC], 500, 0)
    assert chosen == "c2"  # fewest LLM calls within the noise
    assert f"{best} has the best mean {METRIC} but is not significantly better" in text
    assert METHOD in text and "cheapest" in text
    assert [r["within_noise"] for r in records] == [True, True]
    assert sum(r["chosen"] for r in records) == 1 and sum(r["best"] for r in records) == 1


def test_a_small_consistent_gain_is_significant_when_paired():
    """Questions vary far more than the gain: unpaired intervals overlap, paired ones do not."""
    base = list(np.random.default_rng(2).uniform(0, 1, 50))
    better = [v + 0.02 for v in base]
    records, rows = grid({"cheap": base, "dear": better}, {"cheap": 1.0, "dear": 5.0})
    chosen, text = decide(records, rows, Objective(METRIC, True), [METRIC], 500, 0)
    assert chosen == "dear"
    assert "significantly better" in text and "not significantly" not in text
    cheap = records[0]
    assert cheap["within_noise"] is False and cheap["vs_best_hi"] < 0


def test_minimize_and_constraints_are_respected():
    base = list(np.linspace(0.1, 0.9, 30))
    records, rows = grid(
        {"a": base, "b": [v + 0.3 for v in base], "c": base}, {"a": 9.0, "b": 1.0, "c": 2.0}
    )
    objective = Objective(METRIC, False, (Constraint("llm_calls_per_question", "<=", 5),))
    chosen, _ = decide(records, rows, objective, [METRIC], 300, 0)
    assert chosen == "c"  # lowest value among the feasible; "b" is significantly higher
    assert records[0]["feasible"] is False and records[1]["within_noise"] is False


def test_no_feasible_configuration_chooses_nothing():
    records, rows = grid({"a": [0.5, 0.6]}, {"a": 9.0})
    objective = Objective(METRIC, True, (Constraint("llm_calls_per_question", "<=", 1),))
    assert decide(records, rows, objective, [METRIC], 100, 0) == (None, "")
    assert records[0]["chosen"] is False


def test_unmeasured_questions_are_dropped_in_pairs():
    mean, lo, hi, n = paired_bootstrap([1.0, math.nan, 0.5], [0.0, 0.2, math.nan], 100, 0)
    assert n == 1 and mean == lo == hi == 1.0
    assert math.isnan(paired_bootstrap([math.nan], [1.0], 100, 0)[0])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1, 1), min_size=2, max_size=30),
    st.lists(st.floats(-1, 1), min_size=2, max_size=30),
    st.integers(0, 5),
)
def test_paired_interval_holds_the_mean_difference(a, b, seed):
    size = min(len(a), len(b))
    mean, lo, hi, n = paired_bootstrap(a[:size], b[:size], 200, seed)
    assert n == size
    assert lo - 1e-9 <= mean <= hi + 1e-9 or lo == hi
    assert paired_bootstrap(a[:size], b[:size], 200, seed) == (mean, lo, hi, n)  # seeded
