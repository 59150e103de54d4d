"""``ragloop testset``: a QA set in RAGAS columns generated from the user's own corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ragloop.cli import EXIT_NOTHING_MEASURED, app, console, err_console, friendly, progress_bar
from ragloop.cli.flags import LLM_FLAGS, setting_flags
from ragloop.safety.console import plain


@app.command()
@friendly
@setting_flags("llm", *LLM_FLAGS, flag_only=("llm",))
def testset(
    corpus: Path = typer.Argument(..., help="corpus folder, or an index folder built from one"),
    size: int = typer.Option(50, "--size", "-n", help="how many questions"),
    out: Path = typer.Option(Path("testset.jsonl"), "--out", "-o", help="JSON lines file"),
    seed: int = typer.Option(0, "--seed", help="the same seed and corpus give the same set"),
    force: bool = typer.Option(False, "--force", help="replace --out if it exists"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    persona: list[str] = typer.Option(
        [],
        "--persona",
        help='who asks: "name: role description" (repeat for several); conditions the questions',
    ),
    *,
    flags: dict[str, Any],
) -> None:
    """Generate questions (specific, paraphrased, multi-passage, abstract, unanswerable)."""
    from ragloop.errors import ConfigError
    from ragloop.retrievers.manifest import read_manifest
    from ragloop.safety.paths import check_output
    from ragloop.testset import generate, write_rows
    from ragloop.testset.personas import Persona

    personas = [Persona.parse(text) for text in persona]

    if not corpus.is_dir():
        raise ConfigError(f"corpus folder not found: {corpus} (pass an existing folder)")
    built_from = None  # an index folder: the corpus it was built from is an input too
    if (corpus / "manifest.json").is_file():
        built_from = read_manifest(corpus).get("corpus_dir")
    check_output(out, [("corpus", corpus), ("indexed corpus", built_from)])
    if out.exists() and not force:
        raise ConfigError(f"{out} exists: pass --force to replace it, or choose another --out")
    model = None
    llm = flags.get("llm")
    if llm and llm != "none":
        from ragloop.assembly import chat_model_for
        from ragloop.config import load_settings

        # the one LLM-client path: retried like ask, a fault ends in one line naming the server
        settings = load_settings(**flags)
        model = chat_model_for(settings)
    with progress_bar("generating questions") as bar:
        task = bar.add_task("generate", total=size)
        ts = generate(
            corpus,
            size,
            seed=seed,
            llm=model,
            personas=personas,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if not ts.rows:  # nothing to write: say why (every drop and note), leave --out alone
        for reason, n in ts.dropped.items():
            err_console.print(plain(f"dropped {n}: {reason}"), highlight=False)
        for note in ts.notes:
            err_console.print(plain(f"note: {note}"), highlight=False)
        err_console.print(plain(f"no question could be made; {out} not written"), highlight=False)
        raise typer.Exit(EXIT_NOTHING_MEASURED)
    write_rows(ts.rows, out, force=force)
    summary = {
        "out": str(out),
        "rows": len(ts.rows),
        "requested": size,
        "kinds": dict(ts.kinds),
        "dropped": dict(ts.dropped),
        "llm_calls": ts.llm_calls,
        "notes": ts.notes,
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    kinds = ", ".join(f"{k} {n}" for k, n in ts.kinds.items())
    console.print(plain(f"{len(ts.rows)} questions written to {out} ({kinds})"), highlight=False)
    for reason, n in ts.dropped.items():
        err_console.print(plain(f"dropped {n}: {reason}"), highlight=False)
    for note in ts.notes:
        err_console.print(plain(f"note: {note}"), highlight=False)
