"""The experiment table in a terminal: fits 100 columns, verdict first, --wide keeps everything."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from ragloop.cli.experiment import print_summary
from ragloop.experiments.result import ExperimentResult
from ragloop.experiments.tables import COST_COLUMNS, table_width, terminal_table

METRICS = [
    "offline_answer_relevancy",
    "offline_context_recall",
    "non_llm_context_recall",
    "rouge_score",
    "semantic_similarity",
]


def record(n: int, chosen: bool, feasible: bool) -> dict:
    rec = {
        "config": f"c{n}",
        "label": f"sparse>dense>hybrid · second_response · draft:variant-{n} · k=5",
    }
    for i, m in enumerate(METRICS):
        value = 0.1 * i + 0.01 * n
        rec.update({m: value, f"{m}_lo": value - 0.05, f"{m}_hi": value + 0.05})
        rec[f"{m}_coverage"] = 1.0
    rec.update({c: 0.5 + n for c in COST_COLUMNS if c not in ("feasible", "chosen")})
    rec.update({"latency_p50_ms": 1234.5678, "feasible": feasible, "chosen": chosen})
    return rec


def result(configs: int = 6) -> ExperimentResult:
    spec = SimpleNamespace(
        name="wide-grid",
        metrics=METRICS,
        objective=SimpleNamespace(metric=METRICS[0], __str__=lambda self: "maximize"),
    )
    records = [record(n, n == 2, n % 3 != 0) for n in range(1, configs + 1)]
    return ExperimentResult(
        spec,
        records,
        [],
        [],
        "c2",
        {**dict.fromkeys(("graph_runs", "graph_cached", "graph_errors"), 0)},
    )  # type: ignore[arg-type]


def render(res: ExperimentResult, width: int, wide: bool = False) -> str:
    buf = io.StringIO()
    print_summary(res, wide=wide, out=Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


def test_the_table_fits_100_columns_with_the_verdict_first():
    text = render(result(), 100)
    table = [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 100 for line in text.splitlines())
    rows = [line for line in table if line.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == ["ok", "chosen", "fails", "ok", "ok", "fails"]
    assert [r.split("│")[2].strip() for r in rows] == [f"c{n}" for n in range(1, 7)]
    assert "0.020 [-0.030, 0.070]" in text  # the objective with its interval, unbroken
    assert "1235" in text  # p50 in whole milliseconds
    assert "c2: sparse>dense>hybrid · second_response · draft:variant-2 · k=5" in text
    assert "not shown to fit 100 columns:" in " ".join(text.split())


def test_metrics_that_do_not_fit_are_named_and_the_rest_are_shown():
    (headers, rows), hidden = terminal_table(result(), width=120)
    assert table_width((headers, rows)) <= 120
    assert hidden and set(hidden) < set(METRICS[1:])
    shown = [h for h in headers if h in METRICS]
    assert shown + hidden == METRICS[1:]
    (_, _), none_hidden = terminal_table(result(), width=400)
    assert none_hidden == []


def test_wide_keeps_every_column_at_its_own_width():
    text = render(result(), 100, wide=True)
    for column in (*METRICS, "latency_p95_ms", "tokens_per_question", "actions_rewrite"):
        assert column in text
    assert "…" not in text  # nothing cut to an ellipsis
    assert max(len(line) for line in text.splitlines()) > 100
