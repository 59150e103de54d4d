"""``ragloop experiment``: run a grid from a TOML spec, print the table, write the reports."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ragloop.cli import app, console, err_console, friendly, progress_bar


def print_summary(result: Any) -> None:
    """The per-configuration table, the choice and where the files are."""
    from ragloop.experiments.stats import fmt
    from ragloop.experiments.tables import chosen_text, footnotes

    spec, goal = result.spec, result.spec.objective.metric
    table = Table(title=f"ragloop experiment {spec.name}: {len(result.records)} configurations")
    others = [m for m in spec.metrics if m != goal]
    ci = f"{goal} [95% CI]" if f"{goal}_lo" in result.records[0] else goal
    columns = ["config", "label", ci, *others, "iters", "cap", "LLM/q", "p50 ms", "hit", "pick"]
    for column in columns:
        table.add_column(column, overflow="fold")
    for rec in result.records:
        best = fmt(rec[goal])
        if f"{goal}_lo" in rec:
            best += f" [{fmt(rec[goal + '_lo'])}, {fmt(rec[goal + '_hi'])}]"
        cells = [rec["config"], rec["label"], best, *(fmt(rec[m]) for m in others)]
        cells += [
            fmt(rec[c])
            for c in (
                "mean_iterations",
                "cap_share",
                "llm_calls_per_question",
                "latency_p50_ms",
                "context_hit_rate",
            )
        ]
        cells.append("chosen" if rec["chosen"] else "" if rec["feasible"] else "fails")
        table.add_row(*cells, style="bold" if rec["chosen"] else None)
    console.print(table)
    console.print(f"[bold]chosen:[/] {chosen_text(result)}", highlight=False)
    for note in footnotes(result):
        console.print(f"[dim]note:[/] {note}", highlight=False)
    for name, path in result.files.items():
        console.print(f"wrote {name}: {path}", highlight=False)


@app.command("experiment")
@friendly
def experiment_command(
    spec: Path = typer.Argument(..., help="experiment spec (.toml), e.g. experiments/demo.toml"),
    out: Path = typer.Option(None, "--out", help="output folder (default: the spec's 'out')"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    no_cache: bool = typer.Option(False, "--no-cache", help="re-run every graph run and score"),
) -> None:
    """Compare configurations (retrievers, prompts, judge modes) on a dataset and pick the best."""
    from ragloop.experiments.experiment import run_experiment
    from ragloop.experiments.spec import load_spec

    checked = load_spec(spec)  # every problem in the spec is reported before any work
    if out is not None:  # with --out, nothing is written outside it (the cache included)
        import dataclasses

        from ragloop.safety import claim_output_folder

        checked = dataclasses.replace(
            checked, out=claim_output_folder(out), cache_dir=out / "cache"
        )
    options: dict[str, Any] = {"out": out or checked.out, "env": os.environ, "cache": not no_cache}
    if quiet:
        result = run_experiment(checked, **options)
    else:
        with progress_bar() as bar:
            task = bar.add_task("starting", total=None)
            result = run_experiment(
                checked,
                progress=lambda done, total, what: bar.update(
                    task, completed=done, total=total, description=what
                ),
                **options,
            )
    print_summary(result)
    if result.totals["graph_errors"]:
        err_console.print(
            f"[bold red]error:[/] {result.totals['graph_errors']} graph run(s) failed; "
            "see 'error' in rows.jsonl",
            highlight=False,
        )
        raise typer.Exit(1)
    if result.chosen is None:
        raise typer.Exit(1)
