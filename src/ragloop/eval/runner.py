"""``evaluate``: every (row, metric) job bounded, timed out, retried, cached and journaled."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from ragloop._async import run_sync
from ragloop.errors import ConfigError
from ragloop.eval.cache import DEFAULT_CACHE_DIR, Store, Usage
from ragloop.eval.metrics.base import Metric
from ragloop.eval.pgstore import open_store
from ragloop.eval.plan import Job, load_dataset, plan, set_value
from ragloop.eval.prepare import build_metrics
from ragloop.eval.results import EvaluationResult
from ragloop.llm.faults import fault_message
from ragloop.llm.retry import Backpressure, Failure, RetryPolicy, Skip, redact, with_retries
from ragloop.redact import secrets_of

log = logging.getLogger("ragloop")
Progress = Callable[[int, int], Any]
AUTH_SKIP = "skipped: authentication failed"
INTERRUPTED = "not scored: the run was interrupted (it resumes on the next run)"


@dataclass
class _Run:
    """Mutable state shared by the jobs of one run."""

    store: Store | None
    resume: bool
    usage: Usage
    policy: RetryPolicy
    timeout: float | None
    slots: asyncio.Semaphore
    gate: Backpressure
    secrets: list[str]
    progress: Progress | None
    total: int
    done: int = 0
    resumed: int = 0
    retries: int = 0
    fatal: str | None = None
    errors: list[str] = field(default_factory=list)
    #: LLM jobs that were scored, and the last server fault of one that was not (with attempts)
    llm_ok: int = 0
    fault: tuple[Failure, int] | None = None


#: failures that say the LLM server itself is unusable (not the request, not the key)
SERVER_FAULTS = frozenset(
    {"timeout", "connection", "rate_limited", "server_error", "bad_response", "oversized"}
)


def _server_fault(run: _Run, llm: Any) -> list[str]:
    """The one fault line every command prints, when no LLM job got through the server."""
    if run.fault is None or run.llm_ok or run.fatal is not None:
        return []

    failure, attempts = run.fault
    return [fault_message(llm, failure, attempts, run.secrets)]


def _fail(run: _Run, job: Job, failure: Failure) -> None:
    if failure.kind == "auth" and run.fatal is None:
        run.fatal = failure.reason
        run.errors.append(failure.reason)
        log.warning("ragloop: %s; remaining LLM jobs are skipped", failure.reason)
    set_value(job.row, job.label, math.nan, failure.reason)


def _accept(run: _Run, job: Job, result: Any) -> None:
    try:
        value, reason = float(result.value), result.reason
    except (AttributeError, TypeError, ValueError):
        value, reason = math.nan, f"metric returned {result!r:.80}, not a MetricResult"
    reason = redact(reason, run.secrets) if reason else None
    if reason is None and math.isnan(value):
        reason = "metric returned NaN without a reason"
    set_value(job.row, job.label, value, reason)
    if run.store is not None and job.key is not None:
        payload = {"value": None if math.isnan(value) else value, "reason": reason}
        run.store.put("journal", job.key, json.dumps(payload).encode())


def _resume(run: _Run, job: Job) -> bool:
    raw = run.store.get("journal", job.key) if run.resume and run.store and job.key else None
    if raw is None:
        return False
    data = json.loads(raw)
    value = math.nan if data["value"] is None else float(data["value"])
    set_value(job.row, job.label, value, data["reason"])
    run.resumed += 1
    return True


def _report(run: _Run) -> None:
    if run.progress is not None:
        try:
            run.progress(run.done, run.total)
        except Exception:  # noqa: BLE001 - a broken progress bar must not stop the run
            log.exception("ragloop: progress callback failed; progress disabled")
            run.progress = None


async def _attempt(run: _Run, job: Job) -> Any:
    if job.metric.needs_llm and run.fatal is not None:
        raise Skip(AUTH_SKIP)
    return await job.metric._ascore(job.sample)


async def _run_job(run: _Run, job: Job) -> None:
    if not _resume(run, job):
        needs_llm = job.metric.needs_llm
        outcome = await with_retries(
            lambda: _attempt(run, job),
            run.policy,
            slots=run.slots,
            gate=run.gate,
            timeout=run.timeout,
            secrets=run.secrets,
            stop=lambda: needs_llm and run.fatal is not None,
        )
        run.retries += max(0, outcome.attempts - 1)
        if outcome.failure is not None:
            _fail(run, job, outcome.failure)
            if needs_llm and outcome.failure.kind in SERVER_FAULTS:
                run.fault = (outcome.failure, outcome.attempts)
        else:
            _accept(run, job, outcome.value)
            run.llm_ok += needs_llm
    run.done += 1  # not reached when cancelled: progress counts finished jobs only
    _report(run)


async def _stop_when(stop: threading.Event, tasks: list[asyncio.Task[None]]) -> None:
    """Cancel the unfinished jobs once ``stop`` is set; return when every job is done."""
    while not all(t.done() for t in tasks):
        if stop.is_set():
            for task in tasks:
                task.cancel()
            return
        await asyncio.sleep(0.05)


async def aevaluate(
    dataset: Any,
    metrics: Iterable[Metric | str] | None = None,
    llm: BaseChatModel | None = None,
    embeddings: Embeddings | None = None,
    *,
    max_concurrency: int = 16,
    timeout: float | None = 60.0,
    max_retries: int = 5,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    database_url: str | None = None,
    resume: bool = True,
    run_id: str | None = None,
    progress: Progress | None = None,
    retry: RetryPolicy | None = None,
    max_row_chars: int | None = 1_000_000,
    stop: threading.Event | None = None,
) -> EvaluationResult:
    """Score every row with every metric; bad rows are reported and skipped, never fatal.

    Args:
        metrics: instances or names; with ``llm=None`` LLM metric names run as their
            offline variants (noted in the result). None picks defaults from the columns.
        timeout: seconds one attempt of one (row, metric) job may take; then NaN "timeout".
        cache: cache LLM/embedding calls and journal finished jobs in ``cache_dir``
            (default ``.ragloop/cache``) so a re-run repeats no call and resumes.
        database_url: a PostgreSQL URL: the cache lives there instead, shared by machines.
        resume: skip jobs finished by an earlier run (journal in ``cache_dir``).
        progress: called as ``progress(done, total)`` after each job.
        retry: backoff settings (overrides ``max_retries``); its ``sleep`` is injectable.
        max_row_chars: a row longer than this (as JSON) is reported as bad, not scored.
        stop: set it (Ctrl-C in the CLI) to cancel the jobs still running and return what
            finished; unfinished jobs are NaN "interrupted" and resume on the next run.
    """
    if max_concurrency < 1 or max_retries < 0 or (timeout is not None and timeout <= 0):
        raise ConfigError("max_concurrency must be >= 1, max_retries >= 0 and timeout > 0")
    started = time.perf_counter()
    ds = load_dataset(dataset)
    store = open_store(cache_dir or DEFAULT_CACHE_DIR, database_url) if cache else None
    usage = Usage()
    clients: list[Any] = []
    try:
        built, notes = build_metrics(metrics, ds, llm, embeddings, store, usage, clients)
        secrets = sorted({s for m in (llm, embeddings, *built.values()) for s in _secrets(m)})
        rows, bad, jobs = plan(ds, list(built.items()), store, max_row_chars)
        policy = retry or RetryPolicy(max_retries=max_retries)
        run = _Run(
            store,
            resume,
            usage,
            policy,
            timeout,
            asyncio.Semaphore(max_concurrency),
            Backpressure(policy.sleep),
            secrets,
            progress,
            len(jobs),
        )
        _report(run)
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_run_job(run, job)) for job in jobs]
            if stop is not None:
                group.create_task(_stop_when(stop, tasks))
        interrupted = [job for job, task in zip(jobs, tasks, strict=True) if task.cancelled()]
        for job in interrupted:
            set_value(job.row, job.label, math.nan, INTERRUPTED)
    finally:
        for client in clients:
            await client.aclose()
        if store is not None:
            store.close()
    totals = {
        "rows": ds.total_rows,
        "jobs": len(jobs),
        "llm_calls": usage.llm_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_hits": usage.cache_hits,
        "embedding_calls": usage.embedding_calls,
        "embedding_cache_hits": usage.embedding_cache_hits,
        "resumed": run.resumed,
        "retries": run.retries,
        "wall_time_s": round(time.perf_counter() - started, 3),
    }
    return EvaluationResult.build(
        rows,
        list(built),
        bad_rows=bad,
        totals=totals,
        notes=[*ds.notices, *notes]
        + (
            [f"interrupted: {len(jobs) - len(interrupted)} of {len(jobs)} jobs finished"]
            if interrupted
            else []
        ),
        errors=run.errors + _server_fault(run, llm),
        run_id=run_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6],
    )


def _secrets(obj: Any) -> list[str]:
    found = secrets_of(obj)
    for attr in ("llm", "embeddings"):
        found += secrets_of(getattr(obj, attr, None))
    judge = getattr(obj, "judge", None)
    return found + (secrets_of(getattr(judge, "llm", None)) if judge is not None else [])


def evaluate(
    dataset: Any,
    metrics: Iterable[Metric | str] | None = None,
    llm: Any = None,
    embeddings: Any = None,
    **kwargs: Any,
) -> EvaluationResult:
    """Sync ``aevaluate``; also works inside a running event loop (Jupyter)."""
    return run_sync(aevaluate(dataset, metrics, llm, embeddings, **kwargs))
