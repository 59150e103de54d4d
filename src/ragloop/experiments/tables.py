"""The experiment's tables and sentences, shared by report.md, report.html and the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragloop.experiments.stats import ACTIONS, fmt

if TYPE_CHECKING:
    from ragloop.experiments.result import ExperimentResult

Table = tuple[list[str], list[list[str]]]
COST_COLUMNS = [
    "mean_iterations", "cap_share", *(f"actions_{a}" for a in ACTIONS), "rewrite_share",
    "corrected_share", "llm_calls_per_question", "tokens_per_question", "latency_p50_ms",
    "latency_p95_ms", "context_hit_rate", "feasible", "chosen",
]  # fmt: skip


def quality_table(result: ExperimentResult) -> Table:
    """Each metric's mean, bootstrap 95% interval and coverage, one row per configuration.

    The last column is the paired difference from the best configuration on the objective
    (this configuration minus the best, 95% interval), empty for the best itself.
    """
    headers = ["config", "label"]
    for m in result.spec.metrics:
        headers += [m, f"{m} 95% CI", f"{m} coverage"]
    headers.append(f"{result.spec.objective.metric} minus best (paired 95% CI)")
    rows = []
    for rec in result.records:
        row = [rec["config"], rec["label"]]
        for m in result.spec.metrics:
            ci = f"[{fmt(rec[f'{m}_lo'])}, {fmt(rec[f'{m}_hi'])}]" if fmt(rec[m]) else ""
            row += [fmt(rec[m]), ci, fmt(rec[f"{m}_coverage"])]
        diff = fmt(rec.get("vs_best"))
        if diff:
            diff += f" [{fmt(rec.get('vs_best_lo'))}, {fmt(rec.get('vs_best_hi'))}]"
        rows.append([*row, diff])
    return headers, rows


def cost_table(result: ExperimentResult) -> Table:
    """Loop behaviour and cost per configuration (columns named as in results.csv)."""
    return ["config", *COST_COLUMNS], [
        [rec["config"], *(fmt(rec[c]) for c in COST_COLUMNS)] for rec in result.records
    ]


def prompt_table(result: ExperimentResult) -> Table:
    """How often each initial-query prompt variant needed a rewrite or any correction."""
    headers = ["prompt", "variant", "runs", "rewrite_share", "corrected_share", "rewritten queries"]
    rows = []
    for p in result.prompts:
        examples = "; ".join(f"{e['question']} → {e['rewritten']}" for e in p["examples"]) or "-"
        rows.append(
            [
                p["kind"],
                p["variant"],
                fmt(p["runs"]),
                fmt(p["rewrite_share"]),
                fmt(p["corrected_share"]),
                examples,
            ]
        )
    return headers, rows


def chosen_text(result: ExperimentResult) -> str:
    """One sentence naming the chosen configuration and its objective value, or why none."""
    rec = result.record(result.chosen)
    obj = result.spec.objective
    if rec is None:
        return f"No configuration satisfies the objective ({obj}); no settings file was written."
    value = fmt(rec[obj.metric])
    if f"{obj.metric}_lo" in rec:
        value += f" [{fmt(rec[obj.metric + '_lo'])}, {fmt(rec[obj.metric + '_hi'])}]"
    text = f"{rec['config']} ({rec['label']}): {obj.metric} = {value}; objective: {obj}."
    return f"{text} {result.verdict}" if result.verdict else text


def footnotes(result: ExperimentResult) -> list[str]:
    """Notes, skipped rows and run totals, in words."""
    t = result.totals
    lines = list(result.notes)
    lines.append(
        f"graph runs: {t['graph_runs']} run now, {t.get('graph_shared', 0)} identical to another "
        f"configuration's (run once), {t['graph_cached']} from earlier runs (latency as first "
        f"measured), {t['graph_errors']} failed; evaluation jobs: {t.get('eval_jobs', 0)}, of "
        f"which {t.get('eval_shared', 0)} had the same answer and contexts as another "
        f"configuration's (scored once) and {t.get('eval_resumed', 0)} were reused from earlier "
        f"runs; judge LLM calls {t.get('eval_llm_calls', 0)}"
    )
    if result.skipped:
        more = f" (and {len(result.skipped) - 5} more)" if len(result.skipped) > 5 else ""
        lines.append("skipped rows: " + "; ".join(result.skipped[:5]) + more)
    return lines


def overview(result: ExperimentResult) -> dict[str, str]:
    """The facts of the run, by name."""
    spec = result.spec
    axes = sorted(
        {k for c in spec.configurations for k in c.values}
        | {f"prompt_{k}" for c in spec.configurations for k in c.prompt_names}
    )
    per_config = len(result.rows) // max(len(result.records), 1)
    return {
        "spec": str(spec.path),
        "dataset": f"{spec.dataset_path} ({per_config} rows run, {len(result.skipped)} skipped)",
        "corpus": f"{spec.corpus} (web corpus: {spec.web_corpus}, web = {spec.settings.web})",
        "models": f"llm {spec.llm}, judge {spec.judge_llm}, embeddings {spec.embeddings}",
        "metrics": ", ".join(spec.metrics),
        "grid": f"{len(spec.configurations)} configurations over {', '.join(axes) or 'no axis'}",
        "objective": str(spec.objective),
    }


def _short(value: Any, digits: int = 3) -> str:
    """A terminal figure: ``fmt`` with 3 decimals unless told (1 for milliseconds)."""
    return fmt(value, digits)


def verdict(rec: dict[str, Any]) -> str:
    """'chosen'; 'best' (best mean, not chosen); 'tied' (within the noise of the best);
    'ok' (feasible, significantly worse than the best) or 'fails' (breaks a constraint)."""
    if rec["chosen"]:
        return "chosen"
    if rec.get("best"):
        return "best"
    if rec.get("within_noise"):
        return "tied"
    return "ok" if rec["feasible"] else "fails"


def _with_ci(rec: dict[str, Any], metric: str) -> str:
    mean = _short(rec.get(metric))
    if mean and f"{metric}_lo" in rec and _short(rec[f"{metric}_lo"]):
        return f"{mean} [{_short(rec[metric + '_lo'])}, {_short(rec[metric + '_hi'])}]"
    return mean


def table_width(table: Table) -> int:
    """Characters a boxed table needs: widest line of each column, padding and borders."""
    headers, rows = table
    widths = [
        max([*(len(x) for x in h.split("\n")), *(len(r[i]) for r in rows)])
        for i, h in enumerate(headers)
    ]
    return sum(widths) + 3 * len(widths) + 1


def terminal_table(
    result: ExperimentResult, *, width: int = 100, wide: bool = False
) -> tuple[Table, list[str]]:
    """The table ``ragloop experiment`` prints, and the metric names left out to fit ``width``.

    The verdict comes first, configurations go by id (their labels are listed under the
    table), figures have 3 decimals. Other metrics are dropped from the right until the
    table fits ``width`` columns; ``wide`` keeps every column of results.csv instead.
    """
    goal = result.spec.objective.metric
    others = [m for m in result.spec.metrics if m != goal]
    ci = f"{goal}_lo" in result.records[0]
    if wide:
        cost = [c for c in COST_COLUMNS if c not in ("feasible", "chosen")]
        headers = ["pick", "config", *(f"{m}\n[95% CI]" if ci else m for m in result.spec.metrics)]
        headers += cost
        rows = [
            [verdict(r), r["config"], *(_with_ci(r, m) for m in result.spec.metrics)]
            + [_short(r[c], 1 if c.startswith("latency") else 3) for c in cost]
            for r in result.records
        ]
        return (headers, rows), []
    fixed = [
        ("iters", "mean_iterations", 2),
        ("cap", "cap_share", 2),
        ("LLM/q", "llm_calls_per_question", 1),
        ("p50 ms", "latency_p50_ms", 0),
        ("hit", "context_hit_rate", 2),
    ]
    shown = list(others)
    while True:
        headers = ["pick", "config", f"{goal}\n[95% CI]" if ci else goal, *shown]
        headers += [name for name, _, _ in fixed]
        rows = [
            [verdict(r), r["config"], _with_ci(r, goal), *(_short(r[m]) for m in shown)]
            + [_short(r[key], digits) for _, key, digits in fixed]
            for r in result.records
        ]
        if table_width((headers, rows)) <= width or not shown:
            return (headers, rows), others[len(shown) :]
        shown.pop()


def legend(result: ExperimentResult) -> list[str]:
    """One line per configuration: its id and what it sets."""
    return [f"{r['config']}: {r['label']}" for r in result.records]
