"""``ragloop eval-traces`` and ``ragloop eval --traces``: weak spots of the served turns."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ragloop.cli import (
    app,
    console,
    err_console,
    friendly,
)
from ragloop.cli.flags import setting_flags
from ragloop.config import load_settings
from ragloop.errors import ConfigError
from ragloop.safety.console import shown


def _print_weak_spots(spots: Any) -> None:
    def fmt(v: float | None) -> str:
        return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"

    table = Table(title=f"{spots.turns} served turn(s)", title_justify="left")
    for col in ("metric", "mean", "coverage"):
        table.add_column(col)
    for name, mean in spots.means.items():
        table.add_row(name, fmt(mean), f"{spots.coverage[name]:.0%}")
    console.print(table)
    console.print(
        f"hit the iteration cap: {spots.capped}/{spots.turns} ({spots.cap_share:.0%}) · "
        "stop reasons: " + ", ".join(f"{k} {v}" for k, v in spots.stop_reasons.items()),
        highlight=False,
    )
    used = ", ".join(f"{k} {v}" for k, v in spots.actions) or "none"
    skipped = ", ".join(f"{k} {v}" for k, v in spots.skipped_actions)
    skipped = f" · skipped: {skipped}" if skipped else ""
    console.print(f"corrective actions used: {used}{skipped}", highlight=False)
    low = Table(title="lowest-scoring questions", title_justify="left")
    for col in ("score", "question", "stop", "thread", "time"):
        low.add_column(col)
    for row in spots.lowest:
        low.add_row(
            fmt(row["score"]),
            shown(row["question"]),
            row["stop_reason"],
            row["thread"],
            row["ts"][:19],
        )
    console.print(low)
    for note in spots.notes:
        console.print(f"[dim]note: {shown(note)}[/]", highlight=False)


def report_traces(
    path: Path,
    *,
    since: str | None = None,
    metrics: str | None = None,
    llm: str | None = None,
    top: int = 5,
    as_json: bool = False,
    quiet: bool = False,
    llm_options: dict[str, Any] | None = None,
) -> None:
    """Evaluate the turns recorded in ``path`` and print where the service is weak.

    ``llm_options``: the LLM flags as settings (timeout, retries, reply cap).
    """
    from ragloop._async import run_sync
    from ragloop.assembly import judge_model_for, runner_options
    from ragloop.chat.traces import TraceStore
    from ragloop.chat.weak_spots import ascore_traces, find_weak_spots, parse_since
    from ragloop.providers import get_embeddings

    if not Path(path).is_file():
        raise ConfigError(
            f"no trace store at {path}: pass the traces.sqlite that `ragloop chat` writes "
            "(in the data folder, RAGLOOP_DATA_DIR, default .ragloop)"
        )
    settings = load_settings(llm=llm, **(llm_options or {}))
    turns = TraceStore(path).turns(since=parse_since(since))
    if not turns:
        console.print(f"no turns recorded in {path}" + (f" since {since}" if since else ""))
        return
    names = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    model, client = judge_model_for(settings)  # the one LLM-client path, as eval's
    limits = runner_options(client)
    emb = get_embeddings(settings.embeddings)
    cache = Path(settings.data_dir) / "cache"
    if quiet or as_json:
        scored = run_sync(ascore_traces(turns, names, model, emb, cache_dir=cache, **limits))
    else:
        from rich.progress import Progress

        with Progress(console=err_console, transient=True) as bar:
            task = bar.add_task("scoring turns", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            scored = run_sync(
                ascore_traces(
                    turns, names, model, emb, cache_dir=cache, progress=progress, **limits
                )
            )
    spots = find_weak_spots(turns, scored, top=top)
    if as_json:
        typer.echo(json.dumps(spots.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        _print_weak_spots(spots)


@app.command("eval-traces")
@friendly
@setting_flags(
    "llm", help={"llm": "judge with an LLM (default: offline metrics)"}, flag_only=("llm",)
)
def eval_traces(
    path: Path = typer.Argument(..., help="trace store (traces.sqlite in the data folder)"),
    since: str = typer.Option(None, "--since", help="only turns from this date (or 7d, 12h)"),
    metrics: str = typer.Option(None, "--metrics", help="comma-separated metric names"),
    top: int = typer.Option(5, "--top", min=1, help="how many lowest-scoring questions"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
    *,
    flags: dict[str, Any],
) -> None:
    """Evaluate recorded traffic and show where the service is weak."""
    llm = flags.get("llm")
    report_traces(
        path, since=since, metrics=metrics, llm=llm, top=top, as_json=as_json, quiet=quiet
    )
