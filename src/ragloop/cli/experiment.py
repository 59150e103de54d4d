"""``ragloop experiment``: run a grid from a TOML spec, print the table, write the reports."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ragloop.cli import app, err_console, friendly, progress_bar
from ragloop.cli import console as default_console
from ragloop.cli.flags import LLM_FLAGS, RUN_FLAGS, setting_flags
from ragloop.cli.interrupt import EXIT_INTERRUPTED, graceful_interrupt
from ragloop.safety.console import plain, shown


def print_summary(result: Any, *, wide: bool = False, out: Any = None) -> None:
    """The per-configuration table (fitting the terminal unless ``wide``), the choice, files."""
    from ragloop.experiments.tables import (
        chosen_text,
        footnotes,
        legend,
        table_width,
        terminal_table,
    )

    console = out or default_console
    spec = result.spec
    (headers, rows), hidden = terminal_table(result, width=console.width, wide=wide)
    table = Table(
        title=plain(f"ragloop experiment {spec.name}: {len(result.records)} configurations")
    )
    for n, column in enumerate(headers):
        table.add_column(column, no_wrap=n < 2, justify="left" if n < 2 else "right")
    for rec, cells in zip(result.records, rows, strict=True):
        table.add_row(*map(plain, cells), style="bold" if rec["chosen"] else None)
    needed = table_width((headers, rows))
    if needed > console.width:  # --wide: the table at its own width, for a pager or a file
        from rich.console import Console

        wide_console = Console(
            file=console.file,
            width=needed,
            color_system="auto" if console.color_system else None,
            force_terminal=console.is_terminal,
        )
        wide_console.print(table)
    else:
        console.print(table)
    for line in legend(result):
        console.print(plain(f"  {line}"), highlight=False)
    if hidden:
        console.print(
            f"[dim]not shown to fit {console.width} columns:[/] {', '.join(hidden)} "
            "(--wide shows every column; all are in results.csv)",
            highlight=False,
        )
    console.print(f"[bold]chosen:[/] {shown(chosen_text(result))}", highlight=False)
    for note in footnotes(result):
        console.print(f"[dim]note:[/] {shown(note)}", highlight=False)
    for name, path in result.files.items():
        console.print(plain(f"wrote {name}: {path}"), highlight=False)


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
@setting_flags(*LLM_FLAGS, *RUN_FLAGS)
def experiment_command(
    spec: Path = typer.Argument(..., help="experiment spec (.toml), e.g. experiments/demo.toml"),
    out: Path = typer.Option(None, "--out", help="output folder (default: the spec's 'out')"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    no_cache: bool = typer.Option(False, "--no-cache", help="re-run every graph run and score"),
    as_json: bool = typer.Option(False, "--json", help="print the results as JSON"),
    wide: bool = typer.Option(False, "--wide", help="every column of results.csv, however wide"),
    *,
    flags: dict[str, Any],
) -> None:
    """Compare configurations (retrievers, prompts, judge modes) on a dataset and pick the best."""
    from ragloop.experiments.experiment import ExperimentInterrupted, inputs_of, run_experiment
    from ragloop.experiments.spec import load_spec
    from ragloop.safety.paths import check_output

    # every problem in the spec (and the flags, which override its [settings]) is reported
    # before any work; a [grid] axis still varies its own setting
    checked = load_spec(spec, overrides=flags)
    if out is not None:  # with --out, nothing is written outside it (the cache included)
        import dataclasses

        from ragloop.safety import claim_output_folder

        check_output(out, inputs_of(checked), kind="output")
        checked = dataclasses.replace(
            checked, out=claim_output_folder(out), cache_dir=out / "cache"
        )
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
