"""``ragloop calibrate``: fit the answer's sentence model on the index's own corpus."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from ragloop.cli import app, console, friendly, progress_bar
from ragloop.safety.console import plain


@app.command()
@friendly
def calibrate(
    index_dir: Path = typer.Argument(..., help="index folder (built by `ragloop index`)"),
    size: int = typer.Option(
        150, "--size", "-n", min=1, help="how many questions to generate and answer"
    ),
    seed: int = typer.Option(0, "--seed", help="the same seed and index give the same fit"),
    use: bool = typer.Option(
        False,
        "--use",
        help="answer with the fitted model from now on (default: keep it as a candidate; on "
        "the development corpora a fit on generated questions did worse than the shipped one)",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="with --use: use the fit even when it did worse than the model in use on its "
        "own held-out questions (without it, such a fit is kept as a candidate)",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="check the index and say what would be done; write nothing"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Fit the extractive answer's sentence model on questions generated from your corpus.

    Generates a test set from the index's corpus (offline), answers each question with the
    loop, labels the sentences the answer read by whether they hold the question's reference,
    fits the same logistic model the shipped one is on 70% of the questions and scores it on
    the rest against the shipped model. Writes the model (with its provenance) and the rows
    into the index folder: with --use as answer_model.json, which `ragloop ask` then uses with
    the same embeddings; else as answer_model.candidate.json, which nothing reads. A fit that
    did worse than the model in use on its own held-out questions stays a candidate unless
    --force is given too.
    """
    from ragloop.calibration.corpus import calibrate as run_calibration
    from ragloop.calibration.corpus import plan

    if dry_run:
        p = plan(index_dir, size, seed, use)
        if as_json:
            typer.echo(json.dumps({"dry_run": True, **p.to_dict()}, indent=2))
            return
        console.print(plain(f"would calibrate the answer on index {p.index}"), highlight=False)
        for key, value in p.to_dict().items():
            shown = ", ".join(value) if isinstance(value, list) else value
            console.print(plain(f"  {key}: {shown}"), highlight=False)
        return
    with progress_bar("{task.description}") as bar:
        task = bar.add_task("calibrating", total=None)

        def progress(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=total)

        result = run_calibration(
            index_dir, size=size, seed=seed, progress=progress, use=use, force=force
        )
    data = result.to_dict()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    table = Table(title=plain(f"calibration of {result.plan.index}"), show_header=False)
    table.add_row("model written", plain(data["model"]))
    table.add_row("questions", plain(", ".join(f"{k} {n}" for k, n in data["generated"].items())))
    table.add_row("sentence rows", f"{data['rows']} ({data['questions_with_rows']} questions)")
    held = data["held_out"]
    for name, label in (
        ("best_sentence_holds_gold", "held out: best sentence holds the reference"),
        ("sentence_auc", "held out: sentence AUC"),
    ):
        cells = held.get(name, {})
        table.add_row(label, plain(", ".join(f"{k} {_num(v)}" for k, v in cells.items())))
    nf = held.get("not_found_held_out", {})
    table.add_row(
        "held out: not found",
        plain(
            f"answerable {_num(nf.get('answerable'))}, unanswerable {_num(nf.get('unanswerable'))}"
            f" (level {data['not_found_below']})"
        ),
    )
    table.add_row("embeddings", plain(data["embeddings_model"]))
    table.add_row("seconds", str(data["seconds"]))
    console.print(table)
    if result.used:
        said = f"the answer over {result.plan.index} now uses this model (with these embeddings)"
    elif result.not_used:
        said = (
            f"not used, kept as a candidate: {result.not_used}; the answer still uses: "
            f"{result.plan.in_use}. Pass --use --force to answer with it anyway"
        )
    else:
        said = (
            f"kept as a candidate; the answer still uses: {result.plan.in_use}. Pass --use to "
            "answer with it (check with your own questions first: see docs/answer-quality.md)"
        )
    console.print(plain(said), highlight=False)


def _num(value: object) -> str:
    return "n/a" if value is None else f"{value}"
