"""report.html: one self-contained page, matplotlib charts embedded as PNG data URIs, no script."""

from __future__ import annotations

import base64
import html
import io
import math
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from ragloop.experiments.chart_labels import group_points, place_labels
from ragloop.experiments.report_questions import questions_view
from ragloop.experiments.tables import (
    Table,
    chosen_text,
    cost_table,
    footnotes,
    overview,
    prompt_table,
    quality_table,
    verdict,
)

if TYPE_CHECKING:
    from ragloop.experiments.result import ExperimentResult

CHOSEN, OTHER = "#d62728", "#1f77b4"
STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}.chosen{background:#fff3e0}
.box{border-left:4px solid #d62728;padding:.5rem 1rem}
.scroll{overflow-x:auto}img{max-width:100%;height:auto;display:block;margin:.5rem 0 1.5rem}
.fails{color:#a00}.small{font-size:.8rem;color:#555}.num{text-align:right}
table.qv{table-layout:fixed;width:100%}.qv td{overflow-wrap:anywhere}
details.question{margin:.3rem 0}details.question>summary{cursor:pointer}
"""


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _errors(recs: list[dict[str, Any]], metric: str) -> list[list[float]]:
    """Asymmetric error bars from the interval columns (zero where there is none)."""
    low, high = [], []
    for rec in recs:
        mean = _num(rec.get(metric))
        lo, hi = _num(rec.get(f"{metric}_lo", mean)), _num(rec.get(f"{metric}_hi", mean))
        low.append(0.0 if math.isnan(lo) or math.isnan(mean) else max(mean - lo, 0.0))
        high.append(0.0 if math.isnan(hi) or math.isnan(mean) else max(hi - mean, 0.0))
    return [low, high]


def metric_chart(result: ExperimentResult) -> str:
    """Each metric by configuration: the mean with its bootstrap 95% interval; chosen in red."""
    recs, metrics = result.records, result.spec.metrics
    fig = Figure(figsize=(9, 0.45 * len(recs) * len(metrics) + 1.2 * len(metrics)))
    axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
    labels = [f"{r['config']} {r['label']}" for r in recs]
    for ax, metric in zip(axes, metrics, strict=True):
        ys = list(range(len(recs)))[::-1]
        means = [_num(r[metric]) for r in recs]
        colors = [CHOSEN if r["config"] == result.chosen else OTHER for r in recs]
        ax.errorbar(means, ys, xerr=_errors(recs, metric), fmt="none", ecolor="#888", capsize=3)
        ax.scatter(means, ys, c=colors, zorder=3)
        ax.set_yticks(ys, labels, fontsize=8)
        ax.set_title(f"{metric} (mean, 95% interval)", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return _png(fig)


def cost_chart(result: ExperimentResult) -> str:
    """The objective against LLM calls (iterations when offline) and p50 latency per question."""
    recs, metric = result.records, result.spec.objective.metric
    fig = Figure(figsize=(10, 4))
    labelled: list[tuple[Any, list[tuple[float, float, str]]]] = []
    first = ("llm_calls_per_question", "LLM calls per question")
    if not any(_num(r["llm_calls_per_question"]) > 0 for r in recs):
        first = ("mean_iterations", "loop iterations per question (no LLM calls)")
    for ax, (cost, title) in zip(
        fig.subplots(1, 2), (first, ("latency_p50_ms", "latency p50 (ms)")), strict=True
    ):
        xs, ys = [_num(r[cost]) for r in recs], [_num(r[metric]) for r in recs]
        colors = [CHOSEN if r["config"] == result.chosen else OTHER for r in recs]
        ax.errorbar(xs, ys, yerr=_errors(recs, metric), fmt="none", ecolor="#888", capsize=3)
        ax.scatter(xs, ys, c=colors, zorder=3)
        ax.set_xlabel(title)
        ax.set_ylabel(metric)
        ax.set_title(f"{metric} against {title}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.margins(x=0.15, y=0.12)  # room for the labels inside the frame
        labelled.append((ax, group_points(xs, ys, [r["config"] for r in recs])))
    fig.tight_layout()
    for ax, points in labelled:  # after the layout, so the pixel boxes are final
        place_labels(ax, points)
    return _png(fig)


def _table(table: Table, chosen: str | None) -> str:
    headers, rows = table
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    at = headers.index("config") if "config" in headers else 0
    for row in rows:
        cls = ' class="chosen"' if chosen and row and row[at] == chosen else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    inner = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<div class="scroll">{inner}</div>'


def with_verdict(table: Table, result: ExperimentResult) -> Table:
    """The table with a "verdict" column right after "config", and feasible/chosen dropped."""
    headers, rows = table
    drop = {i for i, h in enumerate(headers) if h in ("feasible", "chosen")}
    out_rows = []
    for row in rows:
        rec = result.record(row[0])
        kept = [c for i, c in enumerate(row) if i not in drop]
        out_rows.append([kept[0], verdict(rec) if rec else "", *kept[1:]])
    kept_headers = [h for i, h in enumerate(headers) if i not in drop]
    return [kept_headers[0], "verdict", *kept_headers[1:]], out_rows


def verdict_table(result: ExperimentResult) -> Table:
    """Verdict, configuration, the objective with its interval and each constrained figure."""
    obj = result.spec.objective
    headers = ["verdict", "config", "label", f"{obj.metric} [95% CI]"]
    headers += [str(c) for c in obj.constraints]
    rows = []
    for rec in result.records:
        value = _fmt3(rec.get(obj.metric))
        if value and rec.get(f"{obj.metric}_lo") is not None:
            value += f" [{_fmt3(rec[obj.metric + '_lo'])}, {_fmt3(rec[obj.metric + '_hi'])}]"
        row = [verdict(rec), rec["config"], rec["label"], value]
        for c in obj.constraints:
            mark = "✓" if c.holds(_num(rec.get(c.name))) else "✗"
            row.append(f"{_fmt3(rec.get(c.name))} {mark}")
        rows.append(row)
    return headers, rows


def _fmt3(value: Any) -> str:
    number = _num(value) if isinstance(value, int | float) or value is None else math.nan
    return "" if math.isnan(number) else f"{number:.3f}"


def _img(ident: str, alt: str, uri: str) -> str:
    return f'<img id="{ident}" alt="{html.escape(alt)}" src="{uri}">'


def render_html(result: ExperimentResult) -> str:
    """The whole page as text; the same tables as report.md plus the two charts."""
    spec, esc = result.spec, html.escape
    facts = "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in overview(result).items())
    notes = "".join(f"<li>{esc(n)}</li>" for n in footnotes(result))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<link rel="icon" href="data:,">',
        f"<title>ragloop experiment: {esc(spec.name)}</title><style>{STYLE}</style></head><body>",
        f"<h1>Experiment: {esc(spec.name)}</h1>",
        f"<p>{esc(spec.description)}</p>" if spec.description else "",
        f'<section id="verdict"><h2>Verdict</h2><p class="box">{esc(chosen_text(result))}</p>',
        _table(verdict_table(result), result.chosen),
        "</section>",
        f"<ul>{facts}</ul>",
        "<h2>Metrics by configuration</h2>",
        _img("chart-metrics", "each metric by configuration, 95% intervals", metric_chart(result)),
        "<h2>Cost against quality</h2>",
        _img("chart-cost", "the objective against cost per question", cost_chart(result)),
        "<h2>Quality (mean, bootstrap 95% interval, coverage)</h2>",
        _table(with_verdict(quality_table(result), result), result.chosen),
        "<h2>Loop and cost (per question)</h2>",
        _table(with_verdict(cost_table(result), result), result.chosen),
        "<h2>Prompt variants: how often the loop had to correct the initial query</h2>",
        _table(prompt_table(result), None),
        questions_view(result),
        f"<h2>Notes</h2><ul>{notes}</ul>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"
