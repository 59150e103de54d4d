"""Run an experiment: every configuration on every row, scored, aggregated, compared, written."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragloop._async import run_sync
from ragloop.errors import RagloopError
from ragloop.eval.cache import digest
from ragloop.eval.pgstore import open_store
from ragloop.experiments.report import write_outputs
from ragloop.experiments.result import ExperimentResult
from ragloop.experiments.runs import GridRunner, Progress, build_identity
from ragloop.experiments.spec import ExperimentSpec, load_spec
from ragloop.experiments.stats import prompt_variants, summarize
from ragloop.experiments.verdict import decide
from ragloop.safety.paths import check_output

__all__ = ["ExperimentResult", "Progress", "arun_experiment", "inputs_of", "run_experiment"]


def inputs_of(spec: ExperimentSpec) -> list[tuple[str, Path | None]]:
    """What an experiment reads: its output folder may be none of these, nor inside one."""
    return [
        ("dataset", spec.dataset_path),
        ("corpus", spec.corpus),
        ("web corpus", spec.web_corpus),
    ]


def _pipeline(spec: ExperimentSpec, env: Mapping[str, str], chat: Any, emb: Any) -> Any:
    """One pipeline for the whole grid, its index kept under the cache folder by corpus."""
    from ragloop.pipeline import build_pipeline

    where = digest(
        {
            "corpus": str(spec.corpus.resolve()),
            "embeddings": spec.embeddings,
            "chunks": [spec.settings.chunk_size, spec.settings.chunk_overlap],
        }
    )[:12]
    (spec.cache_dir / "indexes").mkdir(parents=True, exist_ok=True)  # ragloop's own cache
    settings = spec.settings.model_copy(update={"index_dir": spec.cache_dir / "indexes" / where})
    return build_pipeline(
        settings,
        env=env,
        llm=chat,
        embeddings=emb,
        corpus_dir=spec.corpus,
        web_corpus_dir=spec.web_corpus,
    )


async def arun_experiment(
    spec: ExperimentSpec | str | Path,
    *,
    out: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    cache: bool = True,
    progress: Progress | None = None,
    llm: Any = None,
    embeddings: Any = None,
    stop: threading.Event | None = None,
) -> ExperimentResult:
    """Run every configuration of ``spec`` on every row, score, aggregate, choose and write.

    Args:
        spec: a checked spec or the path of one (checked here before any work).
        out: output folder (default: the spec's ``out``).
        env: where API keys are read (the CLI passes ``os.environ``; default: nowhere).
        cache: reuse graph runs and scores from ``spec.cache_dir`` (a re-run repeats no work
            and an interrupted one resumes); False runs everything again.
        llm, embeddings: models to use instead of building them from the spec (tests).
        stop: set it (Ctrl-C) to stop: the configuration in progress is dropped (its graph
            runs stay cached for a re-run), the finished ones are compared and written.
    """
    from ragloop.assembly import chat_model_for, judge_model_for, runner_options
    from ragloop.providers import get_embeddings

    started = time.perf_counter()
    spec = spec if isinstance(spec, ExperimentSpec) else load_spec(spec)
    check_output(out if out is not None else spec.out, inputs_of(spec), kind="output")  # first
    env = {} if env is None else env
    emb = embeddings or get_embeddings(spec.embeddings, env=env)
    # one LLM-client configuration path (spec, RAGLOOP_LLM_*, profile), as every command has
    graph_settings = spec.settings.model_copy(update={"llm": spec.llm})
    chat = llm if llm is not None else chat_model_for(graph_settings, env)
    judge_settings = spec.settings.model_copy(update={"llm": spec.judge_llm})
    judge, client = judge_model_for(judge_settings, env)
    if llm is not None and spec.judge_llm == spec.llm:
        judge = llm
    pipe = _pipeline(spec, env, chat, emb)
    store = open_store(spec.cache_dir / "runs", spec.settings.database_url) if cache else None
    grid = GridRunner(spec, pipe, store, build_identity(spec, chat, emb), progress)
    grid.eval_options = runner_options(client)  # the scoring runner: the same limits
    grid.tick(0, "starting")
    by_config: dict[str, list[dict[str, Any]]] = {}
    try:
        for n, config in enumerate(spec.configurations):
            records = await _unless_stopped(grid.run_config(n, config, cache, judge, emb), stop)
            if records is None:
                break
            by_config[config.id] = records
    finally:
        if store is not None:
            store.close()
    configs = [c for c in spec.configurations if c.id in by_config]
    if not configs:
        raise ExperimentInterrupted("interrupted before any configuration finished")
    table = [
        summarize(c, by_config[c.id], spec.metrics, spec.bootstrap, spec.seed) for c in configs
    ]
    chosen, why = decide(table, by_config, spec.objective, spec.metrics, spec.bootstrap, spec.seed)
    totals = {
        **grid.counts,
        **grid.eval_totals,
        "wall_time_s": round(time.perf_counter() - started, 2),
    }
    result = ExperimentResult(
        spec,
        table,
        [r for c in configs for r in by_config[c.id]],
        prompt_variants(configs, by_config),
        chosen,
        totals,
        notes=list(spec.notes)
        + (
            [f"interrupted: {len(configs)} of {len(spec.configurations)} configurations finished"]
            if len(configs) < len(spec.configurations)
            else []
        ),
        skipped=grid.skipped,
        verdict=why,
    )

    result.files = write_outputs(result, Path(out if out is not None else spec.out))
    return result


class ExperimentInterrupted(RagloopError):
    """Ctrl-C came before any configuration finished: there is nothing to compare."""


async def _unless_stopped(work: Any, stop: threading.Event | None) -> Any:
    """``await work``, or None when ``stop`` is set first (the work is cancelled)."""
    if stop is None:
        return await work
    task = asyncio.ensure_future(work)
    while not task.done():
        if stop.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return None
        await asyncio.wait({task}, timeout=0.05)
    return task.result()


def run_experiment(spec: ExperimentSpec | str | Path, **kwargs: Any) -> ExperimentResult:
    """Sync ``arun_experiment`` (also inside a running event loop)."""
    return run_sync(arun_experiment(spec, **kwargs))
