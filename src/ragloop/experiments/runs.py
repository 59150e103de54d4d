"""The graph runs of an experiment: bounded, cached by their inputs, scored per configuration."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import math
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ragloop.eval.cache import Store, digest
from ragloop.eval.runner import aevaluate
from ragloop.eval.schema import EvaluationDataset, SingleTurnSample
from ragloop.eval.wrappers import model_identity
from ragloop.experiments.checks import usable_rows
from ragloop.experiments.grid import Configuration
from ragloop.experiments.spec import ExperimentSpec
from ragloop.experiments.stats import context_hit
from ragloop.redact import redact_text, redact_value, secret_values
from ragloop.retrievers.corpus import fingerprint

#: progress(done, total, what): units are graph runs plus evaluation jobs across the grid
Progress = Callable[[int, int, str], Any]
RUN_NS = "experiment-run"
log = logging.getLogger("ragloop")


@functools.lru_cache(maxsize=1)
def code_print() -> str:
    """A hash of the code and data that shape a graph run, so a changed graph is never reused."""
    import ragloop

    root = Path(ragloop.__file__).parent
    files = [*root.glob("graph/*.py"), *root.glob("nodes/*.py"), *root.glob("retrievers/*.py")]
    files += [*root.glob("config/*.py")]
    files += [
        root / n for n in ("pipeline.py", "assembly.py", "text.py", "data/answer_cache.jsonl")
    ]
    missing = [p for p in files if not p.is_file()]
    if missing:  # a module moved: the print must follow it, or runs of changed code are reused
        raise RuntimeError(f"code_print: no such file {missing[0]}")
    sha = hashlib.sha256()
    for path in sorted(files):
        sha.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return sha.hexdigest()[:16]


def build_identity(spec: ExperimentSpec, llm: Any, embeddings: Any) -> dict[str, Any]:
    """What a graph run depends on besides its row and context: code, settings, models, corpora."""
    return {
        "code": code_print(),
        "settings": spec.settings.model_dump(mode="json", exclude={"index_dir", "data_dir"}),
        "llm": model_identity(llm) if llm is not None else None,
        "embeddings": model_identity(embeddings),
        "corpus": fingerprint(spec.corpus),
        "web": fingerprint(spec.web_corpus) if spec.web_corpus else None,
    }


def to_sample(row: SingleTurnSample, run: dict[str, Any]) -> SingleTurnSample:
    """The run as a sample for the runner, with the dataset's reference columns."""
    return SingleTurnSample(
        user_input=row.user_input,
        response=run.get("answer") or None,
        retrieved_contexts=[c["text"] for c in run.get("contexts", [])],
        reference=row.reference,
        reference_contexts=row.reference_contexts,
        multi_responses=row.multi_responses,
        rubrics=row.rubrics,
    )


def row_record(
    config: Configuration,
    index: int,
    row: SingleTurnSample,
    run: dict[str, Any],
    cached: bool,
    values: dict[str, float],
    reasons: dict[str, Any],
) -> dict[str, Any]:
    """One line of rows.jsonl: the run, its cost, whether it hit a reference doc, its scores."""
    extras = row.extras()
    contexts = run.get("contexts", [])
    sources = [c.get("source", "") for c in contexts]
    return {
        "config": config.id,
        "label": config.label,
        "index": index,
        "id": extras.get("id"),
        "user_input": row.user_input,
        "reference": row.reference,
        "response": run.get("answer", ""),
        "sources": sources,
        "retrieved_contexts": [c.get("text", "") for c in contexts],
        "iterations": run.get("iterations", 0),
        "stop_reason": run.get("stop_reason", "error"),
        "actions": run.get("actions", []),
        "llm_calls": run.get("llm_calls", 0),
        "tokens": run.get("tokens", 0),
        "latency_ms": run.get("latency_ms", 0.0),
        "context_hit": context_hit(sources, list(extras.get("reference_doc_ids") or [])),
        "cached": cached,
        "error": run.get("error"),
        "metrics": values,
        "reasons": reasons,
    }


class GridRunner:
    """Runs one pipeline over every configuration of a spec and scores each with the runner."""

    def __init__(
        self,
        spec: ExperimentSpec,
        pipe: Any,
        store: Store | None,
        identity: dict[str, Any],
        progress: Progress | None,
    ):
        self.spec, self.pipe, self.store, self.progress = spec, pipe, store, progress
        self.identity = identity
        #: the scoring runner's limits (timeout, retry policy) from the LLM client configuration
        self.eval_options: dict[str, Any] = {}
        self.rows, self.skipped = usable_rows(spec.dataset)
        self.unit = len(self.rows) * (1 + len(spec.metrics))
        self.total = self.unit * len(spec.configurations)
        self.counts = {"graph_runs": 0, "graph_cached": 0, "graph_shared": 0, "graph_errors": 0}
        self.eval_totals: dict[str, int] = {"eval_shared": 0}
        self._run_keys: set[str] = set()  # graph runs of this experiment, by cache key
        self._scored: set[str] = set()  # samples scored by this experiment, by content
        self._warm = asyncio.Lock()
        self._warmed = False

    def tick(self, done: int, what: str) -> None:
        """Report progress; a failing callback is logged and dropped, never fatal."""
        if self.progress is not None:
            try:
                self.progress(done, self.total, what)
            except Exception:  # noqa: BLE001 - a broken progress bar must not stop the grid
                log.exception("ragloop: progress callback failed; progress disabled")
                self.progress = None

    async def _warm_up(self, question: str) -> None:
        """One untimed offline run first, so loading costs stay out of latency (no LLM spend)."""
        async with self._warm:
            if not self._warmed and getattr(self.pipe, "model", "none") == "none":
                self._warmed = True
                await self.pipe.arun(question)

    async def run_row(
        self, ctx: dict[str, Any], row: SingleTurnSample, slots: asyncio.Semaphore
    ) -> tuple[dict[str, Any], bool]:
        """The graph's run of one row (from the cache when these inputs ran before)."""
        fields = {"user_input", "reference", "reference_contexts"}
        key = digest(
            {
                "build": self.identity,
                "context": ctx,
                "row": row.model_dump(mode="json", include=fields),
            }
        )
        secrets = secret_values()
        raw = self.store.get(RUN_NS, key) if self.store else None
        shared = key in self._run_keys  # another configuration of this run had these inputs
        self._run_keys.add(key)
        if raw is not None:
            self.counts["graph_shared" if shared else "graph_cached"] += 1
            return json.loads(raw), True
        async with slots:
            try:
                await self._warm_up(str(row.user_input))
                result = await self.pipe.arun(
                    row.user_input,
                    reference=row.reference,
                    reference_contexts=row.reference_contexts,
                    **ctx,
                )
            except Exception as exc:  # noqa: BLE001 - one failed row must not stop the grid
                self.counts["graph_errors"] += 1
                return {"error": redact_text(f"{type(exc).__name__}: {exc}", secrets)}, False
        data = redact_value(result.to_dict(), secrets)  # a key a model echoes is not kept
        if self.store is not None:
            self.store.put(RUN_NS, key, json.dumps(data).encode())
        self.counts["graph_runs"] += 1
        return data, False

    def _repeats(self, samples: list[SingleTurnSample]) -> int:
        """How many samples repeat one scored earlier in this experiment (same content).

        The runner journals each (sample, metric) by content, so a configuration whose answer
        and contexts equal another's is served from that journal: on a first run these are
        jobs shared inside the run, not work resumed from an earlier run.
        """
        repeats = 0
        for sample in samples:
            content = digest(sample.model_dump(mode="json", exclude_none=True))
            repeats += content in self._scored
            self._scored.add(content)
        return repeats

    async def run_config(
        self, n: int, config: Configuration, cache: bool, judge: Any, emb: Any
    ) -> list[dict[str, Any]]:
        """Every row through the graph, then every (row, metric) through the runner."""
        base, what = n * self.unit, f"{config.id} {config.label}"
        ctx = {
            k: tuple(v) if isinstance(v, list) else v for k, v in asdict(config.context()).items()
        }
        slots = asyncio.Semaphore(self.spec.concurrency)
        finished = 0

        async def one(row: SingleTurnSample) -> tuple[dict[str, Any], bool]:
            nonlocal finished
            out = await self.run_row(ctx, row, slots)
            finished += 1
            self.tick(base + finished, f"{what}: running the graph")
            return out

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(row)) for _, row in self.rows]
        runs = [t.result() for t in tasks]
        size = len(self.rows) * len(self.spec.metrics)

        def scored(done: int, total: int) -> None:
            step = done * size // total if total else 0
            self.tick(base + len(self.rows) + step, f"{what}: scoring")

        samples = [to_sample(row, run) for (_, row), (run, _) in zip(self.rows, runs, strict=True)]
        result = await aevaluate(
            EvaluationDataset(samples),
            list(self.spec.metrics),
            llm=judge,
            embeddings=emb,
            max_concurrency=self.spec.eval_concurrency,
            cache=cache,
            cache_dir=self.spec.cache_dir,
            database_url=self.spec.settings.database_url,
            progress=scored,
            run_id=f"{self.spec.name}-{config.id}",
            **self.eval_options,
        )
        repeats = self._repeats(samples)
        for key in ("jobs", "resumed", "llm_calls", "cache_hits", "input_tokens", "output_tokens"):
            total_key = f"eval_{key}"
            value = int(result.totals.get(key, 0))
            if key == "resumed":  # a job repeating this run's own is shared, not from before
                shared = min(value, repeats * len(self.spec.metrics))
                self.eval_totals["eval_shared"] += shared
                value -= shared
            self.eval_totals[total_key] = self.eval_totals.get(total_key, 0) + value
        self.tick(base + self.unit, f"{what}: done")
        records = []
        for (index, row), (run, cached), score in zip(self.rows, runs, result.rows, strict=True):
            error = run.get("error")
            values = {m: score.values.get(m, math.nan) for m in self.spec.metrics}
            reasons = {
                m: f"graph failed: {error}" if error else score.reasons.get(m)
                for m in self.spec.metrics
            }
            records.append(row_record(config, index, row, run, cached, values, reasons))
        return records
