"""``ragloop ask``: one question through the self-correcting graph, with the path it took."""

from __future__ import annotations

import json
import math
from typing import Any

import typer
from rich.table import Table

from ragloop.cli import app, console, err_console, friendly, read_stdin_arg
from ragloop.cli.flags import LLM_FLAGS, RUN_FLAGS, setting_flags
from ragloop.config import load_settings
from ragloop.graph.result import RunResult
from ragloop.safety.console import plain, shown


def show_result(result: RunResult) -> None:
    """Print answer, citations, the path with reasons, and the scores."""
    console.print(f"\n[bold]Q:[/] {shown(result.question)}", highlight=False)
    console.print(f"[bold]A:[/] {shown(result.answer)}", highlight=False)
    for cite in result.citations:
        origin = " (web)" if cite.get("origin") == "web" else ""
        console.print(
            plain(f"   [{cite['n']}] {cite['id']} — {cite.get('title', '')}{origin}"),
            highlight=False,
        )
    path = Table(title="path", show_header=True, title_justify="left")
    path.add_column("#")
    path.add_column("node")
    path.add_column("what and why")
    for n, step in enumerate(result.steps, start=1):
        path.add_row(str(n), plain(step.get("node")), plain(step.get("detail")))
    console.print(path)
    reasons = result.reasons()
    scores = ", ".join(
        f"{k}=n/a ({reasons[k]})" if math.isnan(v) else f"{k}={v:.2f}"
        for k, v in result.scores.items()
    )
    console.print(
        plain(
            f"stop: {result.stop_reason} · iterations: {result.iterations} · scores: {scores} · "
            f"LLM calls: {result.llm_calls} · {result.latency_ms:.0f} ms"
        ),
        highlight=False,
    )


@app.command()
@friendly
@setting_flags("llm", "corpus_dir", "index_dir", *RUN_FLAGS, *LLM_FLAGS)
def ask(
    question: str = typer.Argument(..., help="the question; - reads it from standard input"),
    retriever: str = typer.Option(
        None,
        "--retriever",
        help="retriever to start with, the others kept in their order (any registered name)",
    ),
    demo: bool = typer.Option(False, "--demo", help="answer from the bundled demo base"),
    force: bool = typer.Option(
        False, "--force", help="rebuild an index made from another corpus or chunking"
    ),
    reference: str = typer.Option(None, "--reference", help="judge recall against this answer"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    *,
    flags: dict[str, Any],
) -> None:
    """Answer a question with citations, and show the path the loop took and its scores."""
    from ragloop.errors import ConfigError
    from ragloop.pipeline import build_pipeline

    question = read_stdin_arg(question, "question")
    if not question.strip():
        raise ConfigError('the question is empty: ragloop ask "your question"')
    settings = load_settings(**flags)
    if retriever:  # start with it, keep the others in their order; the name is validated
        rest = [r for r in settings.retrievers if r != retriever]
        settings = load_settings(**{**flags, "retrievers": [retriever, *rest]})
    with err_console.status("building the pipeline…"):
        pipeline = build_pipeline(settings, demo=demo, force=force)
    err_console.print(plain(f"answering from: {pipeline.describe_sources()}", "dim"))
    with err_console.status("thinking…"):
        result = pipeline.run(question, reference=reference)
    from ragloop.chat.stores import trace_store
    from ragloop.chat.traces import record_turn

    record_turn(
        trace_store(settings),  # Postgres with a database_url, like chat
        result,
        None,
        pipeline.model,
        question,
        source="ask",
    )
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        show_result(result)
