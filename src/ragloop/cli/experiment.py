"""``ragloop experiment``: run a grid from a TOML spec, print the table, write the reports."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ragloop.cli import (
    MAX_RETRIES_HELP,
    MAX_TOKENS_HELP,
    TIMEOUT_HELP,
    app,
    console,
    err_console,
    friendly,
    llm_knobs,
    progress_bar,
)
from ragloop.cli.interrupt import EXIT_INTERRUPTED, graceful_interrupt


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


def _as_json(result: Any) -> dict[str, Any]:
    """What ``--json`` prints: one record per configuration, the choice, totals, notes, files."""
    return {
        "name": result.spec.name,
        "configurations": result.records,
        "chosen": result.chosen,
        "totals": result.totals,
        "notes": result.notes,
        "skipped": result.skipped,
        "files": {k: str(v) for k, v in result.files.items()},
    }


@app.command("experiment")
@friendly
def experiment_command(
    spec: Path = typer.Argument(..., help="experiment spec (.toml), e.g. experiments/demo.toml"),
    out: Path = typer.Option(None, "--out", help="output folder (default: the spec's 'out')"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    no_cache: bool = typer.Option(False, "--no-cache", help="re-run every graph run and score"),
    timeout: float = typer.Option(None, "--timeout", help=TIMEOUT_HELP),
    max_tokens: int = typer.Option(None, "--max-tokens", help=MAX_TOKENS_HELP),
    max_retries: int = typer.Option(None, "--max-retries", help=MAX_RETRIES_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the results as JSON"),
    wide: bool = typer.Option(False, "--wide", help="every column of results.csv, however wide"),
) -> None:
    """Compare configurations (retrievers, prompts, judge modes) on a dataset and pick the best."""
    from ragloop.experiments.experiment import ExperimentInterrupted, run_experiment
    from ragloop.experiments.spec import load_spec

    checked = load_spec(spec)  # every problem in the spec is reported before any work
    if out is not None:  # with --out, nothing is written outside it (the cache included)
        import dataclasses

        from ragloop.safety import claim_output_folder

        checked = dataclasses.replace(
            checked, out=claim_output_folder(out), cache_dir=out / "cache"
        )
    knobs = {k: v for k, v in llm_knobs(timeout, max_tokens, max_retries).items() if v is not None}
    if knobs:  # the flags override the spec's [settings] (validated like any setting)
        import dataclasses

        from ragloop.config import load_settings

        merged = load_settings(**{**checked.settings.model_dump(), **knobs})
        checked = dataclasses.replace(checked, settings=merged)
    options: dict[str, Any] = {"out": out or checked.out, "env": os.environ, "cache": not no_cache}
    say = lambda text: err_console.print(text, markup=False)  # noqa: E731
    try:
        with graceful_interrupt(say) as stop:
            options["stop"] = stop
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
    except ExperimentInterrupted as exc:
        err_console.print(f"interrupted: {exc}; nothing written", markup=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if as_json:
        typer.echo(json.dumps(_as_json(result), ensure_ascii=False, indent=2, default=str))
    else:
        print_summary(result, wide=wide)
    if stop.is_set():
        err_console.print("interrupted: the table covers the configurations that finished")
        raise typer.Exit(EXIT_INTERRUPTED)
    if result.totals["graph_errors"]:
        err_console.print(
            f"[bold red]error:[/] {result.totals['graph_errors']} graph run(s) failed; "
            "see 'error' in rows.jsonl",
            highlight=False,
        )
        raise typer.Exit(1)
    if result.chosen is None:
        raise typer.Exit(1)
