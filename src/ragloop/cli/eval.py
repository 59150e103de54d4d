"""``ragloop eval``: score a dataset file and print what was measured and what was not."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import typer

from ragloop.cli import EXIT_NOTHING_MEASURED, STDIN, app, err_console, friendly, progress_bar
from ragloop.cli.eval_summary import print_result
from ragloop.cli.flags import LLM_FLAGS, RUN_FLAGS, setting_flags
from ragloop.cli.interrupt import EXIT_INTERRUPTED, graceful_interrupt
from ragloop.safety.console import plain, shown

#: exit status of an eval that measured no row of any metric
NOTHING_MEASURED = EXIT_NOTHING_MEASURED


def _database_url(no_cache: bool) -> str | None:
    """RAGLOOP_DATABASE_URL (or the config's database_url): the cache then lives in Postgres."""
    from ragloop.config import load_settings

    return None if no_cache else load_settings().database_url


def _run(
    evaluate: Any,
    dataset: Path,
    names: Any,
    chat: Any,
    emb: Any,
    quiet: bool,
    options: dict[str, Any],
) -> Any:
    """Run the evaluation, under a progress bar on stderr unless ``quiet``."""
    if quiet:
        return evaluate(dataset, names, chat, emb, **options)
    with progress_bar("scoring") as bar:
        task = bar.add_task("jobs", total=None)
        return evaluate(
            dataset,
            names,
            chat,
            emb,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            **options,
        )


@app.command("eval")
@friendly
@setting_flags(
    "llm",
    "embeddings",
    "index_dir",
    *LLM_FLAGS,
    *RUN_FLAGS,
    help={
        "llm": "judge model, e.g. openai:gpt-4o-mini (none: the offline variants)",
        "embeddings": "embeddings of the metrics that need them (without it: wordllama)",
        "index_dir": "with --run: the index folder",
    },
    flag_only=("llm", "embeddings"),
)
def eval_command(
    dataset: Path = typer.Argument(
        None, help="dataset file: .jsonl, .json or .csv; - reads JSON lines from stdin"
    ),
    metrics: str = typer.Option(
        None, "--metrics", "-m", help="comma-separated names (default: chosen from the columns)"
    ),
    out: Path = typer.Option(None, "--out", help="folder for rows.jsonl and summary.json"),
    concurrency: int = typer.Option(16, "--concurrency", min=1, help="jobs at a time"),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="cache folder (.ragloop/cache)"),
    no_cache: bool = typer.Option(False, "--no-cache", help="no call cache, no resume journal"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    traces: Path = typer.Option(
        None, "--traces", help="evaluate recorded traffic (traces.sqlite) instead of a dataset"
    ),
    since: str = typer.Option(None, "--since", help="with --traces: turns since a date or 7d/12h"),
    run: bool = typer.Option(
        False, "--run", help="answer rows without a response with the pipeline first"
    ),
    limit: int = typer.Option(None, "--limit", min=1, help="only the first N rows of the file"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    threads: Path = typer.Option(
        None, "--threads", help="score recorded conversations (chat.sqlite) with multi-turn metrics"
    ),
    topics: str = typer.Option(None, "--topics", help="with --threads: allowed topics, a,b,c"),
    *,
    flags: dict[str, Any],
) -> None:
    """Score a dataset (or recorded traffic) with metrics; bad rows are reported, never fatal."""
    llm = flags.pop("llm", None)  # the judge: from --llm only, never RAGLOOP_LLM
    embeddings = flags.pop("embeddings", None)
    index_dir = flags.pop("index_dir", None)
    llm_options = {k: v for k, v in flags.items() if k in LLM_FLAGS}
    if out is not None:  # before any scoring: not an input, not a folder of the user's files
        from ragloop.safety.paths import check_output

        inputs = [("dataset", dataset), ("index", index_dir), ("traces", traces)]
        check_output(out, [*inputs, ("chat memory", threads)], kind="output")
    if run and dataset is not None:  # the demo QA set answered from another corpus: say so
        from ragloop.cli.eval_run import demo_set_mismatch

        mismatch = demo_set_mismatch(dataset, index_dir)
        if mismatch:
            err_console.print(f"warning: {mismatch}", markup=False, highlight=False)
    if traces is not None:
        from ragloop.cli.traces import report_traces

        report_traces(
            traces,
            since=since,
            metrics=metrics,
            llm=llm,
            quiet=quiet,
            llm_options=llm_options,
        )
        return
    if threads is not None:
        from ragloop.chat.threads import default_thread_metrics, thread_dataset

        dataset = thread_dataset(threads, topics)  # type: ignore[assignment]
        metrics = metrics or ",".join(default_thread_metrics(llm is not None, topics))
    if dataset is None:
        from ragloop.errors import ConfigError

        raise ConfigError("give a DATASET file, or --traces PATH to evaluate recorded traffic")
    from ragloop.assembly import judge_model_for, runner_options
    from ragloop.cli.eval_run import split_llm_only
    from ragloop.config import load_settings
    from ragloop.eval.runner import evaluate
    from ragloop.providers import get_embeddings

    names = [n.strip() for n in metrics.split(",") if n.strip()] if metrics else None
    skipped: list[str] = []
    if names is not None:
        names, skipped = split_llm_only(names, has_llm=llm is not None)
        if not names:
            for note in skipped:
                err_console.print(f"[bold red]error:[/] {shown(note)}", highlight=False)
            err_console.print("nothing to measure: every metric named needs an LLM judge")
            raise typer.Exit(NOTHING_MEASURED)
    if isinstance(dataset, Path) and str(dataset) == STDIN:
        from ragloop.cli.eval_run import stdin_dataset

        source: Any = stdin_dataset()
    else:
        source = dataset
    # one configuration path: flags, then RAGLOOP_LLM_*, then the profile (local or remote);
    # the runner retries jobs itself (max_retries, timeout per attempt), the client does not
    settings = load_settings(**flags, llm=llm or "none")  # the run settings too, for --run
    chat, client = judge_model_for(settings, os.environ)
    emb = get_embeddings(embeddings, env=os.environ) if embeddings else None
    data: Any = source
    pre_notes: list[str] = []
    if limit is not None or run:
        from ragloop.cli.eval_run import first_rows
        from ragloop.eval.plan import load_dataset

        data = load_dataset(source)
        if limit is not None:
            data = first_rows(data, limit)
    if run:
        from ragloop.cli.eval_run import answer_first

        data, pre_notes = answer_first(data, settings, index_dir, concurrency, quiet)
    options: dict[str, Any] = {
        "max_concurrency": concurrency,
        **runner_options(client),
        "cache": not no_cache,
        "cache_dir": cache_dir,
        "database_url": _database_url(no_cache),
    }
    quiet_log = logging.getLogger("ragloop")  # everything it would say lands in the notes
    level = quiet_log.level
    quiet_log.setLevel(logging.ERROR)
    try:
        with graceful_interrupt(lambda text: err_console.print(text, markup=False)) as stop:
            result = _run(evaluate, data, names, chat, emb, quiet, {**options, "stop": stop})
    finally:
        quiet_log.setLevel(level)
    result.notes[:0] = pre_notes + skipped
    if llm is None:
        result.notes.append("no --llm given: LLM metrics ran as their offline variants")
    if not run and any("response" in bad.reason for bad in result.bad_rows):
        result.notes.append(
            "rows without a response: add --run to answer them with the pipeline first"
        )
    if as_json:
        typer.echo(json.dumps(result.summary(), ensure_ascii=False, indent=2, default=str))
    else:
        print_result(result)
    if out is not None:
        rows_path, summary_path = result.write(out)
        err_console.print(plain(f"wrote {rows_path} and {summary_path}"), highlight=False)
        if run:
            from ragloop.cli.eval_run import write_answered

            answered = write_answered(data, rows_path.parent)
            err_console.print(
                f"wrote {answered} (the rows with the pipeline's answers: score it again "
                "without --run)",
                highlight=False,
            )
    if stop.is_set():
        err_console.print("interrupted: the summary above covers the jobs that finished")
        raise typer.Exit(EXIT_INTERRUPTED)
    if result.errors:  # a runtime failure (e.g. authentication) outranks "nothing measured"
        raise typer.Exit(1)
    if not any(s.measured for s in result.metrics.values()):
        err_console.print(
            "[bold red]nothing measured:[/] no row could be scored by any metric (see above)",
            highlight=False,
        )
        raise typer.Exit(NOTHING_MEASURED)
