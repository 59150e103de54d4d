"""What ``ragloop eval`` does before scoring: read the rows (stdin too), answer them with the
pipeline, skip unjudgeable names.

``--run`` answers every single-turn row that has a question but no ``response`` with the
pipeline as ``ragloop ask`` would (service mode: the row's reference is used for scoring only,
never shown to the loop), so a QA set such as the bundled ``qa.jsonl`` can be scored as it is.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragloop.cli import STDIN, err_console, progress_bar, read_stdin_arg
from ragloop.eval.schema import EvaluationDataset, SingleTurnSample

Progress = Callable[[int, int], Any]


def stdin_dataset() -> EvaluationDataset:
    """``eval -``: the rows on stdin (JSON lines, or one JSON array), read like a file."""
    text = read_stdin_arg(STDIN, "dataset (JSON lines)")
    with tempfile.TemporaryDirectory(prefix="ragloop-stdin-") as folder:
        path = Path(folder) / ("stdin.json" if text.lstrip().startswith("[") else "stdin.jsonl")
        path.write_text(text, encoding="utf-8")
        return EvaluationDataset.load(path)  # bad lines are reported as bad rows


def split_llm_only(names: list[str], has_llm: bool) -> tuple[list[str], list[str]]:
    """(names to run, notes on names skipped because they need an LLM judge and none was given).

    Names with an offline variant (answer_relevancy, context_recall, ...) are kept: the runner
    swaps them for the variant and says so. An unknown name is kept so the runner's error
    (listing the known names) is what the user sees.
    """
    if has_llm:
        return names, []
    from ragloop.errors import RagloopError
    from ragloop.eval.metrics.base import get_metric_class
    from ragloop.eval.prepare import resolve_name

    keep, notes = [], []
    for name in names:
        resolved, _ = resolve_name(name, has_llm=False)
        try:
            needs_llm = get_metric_class(resolved).needs_llm
        except RagloopError:
            needs_llm = False
        if needs_llm:
            notes.append(
                f"{name} skipped: it needs an LLM judge and has no offline variant "
                "(pass --llm SPEC to run it)"
            )
        else:
            keep.append(name)
    return keep, notes


def _needs_answer(sample: Any) -> bool:
    return isinstance(sample, SingleTurnSample) and bool(sample.user_input) and not sample.response


async def _answer_all(
    ds: EvaluationDataset, pipeline: Any, concurrency: int, progress: Progress | None
) -> tuple[list[Any], list[str]]:
    todo = [i for i, s in enumerate(ds.samples) if _needs_answer(s)]
    samples = list(ds.samples)
    notes: list[str] = []
    slots = asyncio.Semaphore(concurrency)
    done = 0

    async def one(i: int) -> None:
        nonlocal done
        sample = samples[i]
        async with slots:
            try:
                result = await pipeline.arun(sample.user_input)
            except Exception as exc:  # noqa: BLE001 - one failed row is reported, not fatal
                notes.append(f"row {ds.indices[i]}: the pipeline failed ({type(exc).__name__})")
            else:
                samples[i] = sample.model_copy(
                    update={
                        "response": result.answer,
                        "retrieved_contexts": [c.get("text", "") for c in result.contexts],
                    }
                )
        done += 1
        if progress is not None:
            progress(done, len(todo))

    await asyncio.gather(*(one(i) for i in todo))
    return samples, notes


def answer_rows(
    ds: EvaluationDataset,
    pipeline: Any,
    *,
    concurrency: int = 1,
    progress: Progress | None = None,
) -> tuple[EvaluationDataset, list[str]]:
    """The dataset with ``response`` and ``retrieved_contexts`` filled in by ``pipeline``.

    Rows that already have a response are kept as they are; bad rows stay reported.
    """
    from ragloop._async import run_sync

    todo = sum(1 for s in ds.samples if _needs_answer(s))
    samples, notes = run_sync(_answer_all(ds, pipeline, concurrency, progress))
    out = EvaluationDataset(samples, ds.errors, ds.notices, ds.total_rows)
    out.indices = list(ds.indices)
    notes.insert(0, f"--run: the pipeline answered {todo - len(notes)} of {todo} row(s) first")
    return out, notes


def answer_first(
    ds: Any, settings: Any, index_dir: Path | None, concurrency: int, quiet: bool
) -> tuple[Any, list[str]]:
    """``--run``: the dataset with every missing response answered by the pipeline, under a
    progress bar on stderr unless ``quiet``."""
    from ragloop.pipeline import build_pipeline  # heavy: loaded only when --run is given

    llm = settings.llm if settings.llm != "none" else None
    if index_dir is not None:
        settings = settings.model_copy(update={"index_dir": index_dir})
    with err_console.status("building the pipeline…"):
        pipeline = build_pipeline(settings)
    slots = concurrency if llm else 1  # offline runs share the CPU: one at a time
    if quiet:
        return answer_rows(ds, pipeline, concurrency=slots)
    with progress_bar("answering") as bar:
        task = bar.add_task("rows", total=None)
        return answer_rows(
            ds,
            pipeline,
            concurrency=slots,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def first_rows(ds: EvaluationDataset, limit: int) -> EvaluationDataset:
    """The dataset cut to its first ``limit`` rows of the file (bad rows among them kept)."""
    keep = [(i, s) for i, s in zip(ds.indices, ds.samples, strict=True) if i < limit]
    errors = [e for e in ds.errors if e.index < limit]
    out = EvaluationDataset([s for _, s in keep], errors, ds.notices, min(limit, ds.total_rows))
    out.indices = [i for i, _ in keep]
    return out


def write_answered(ds: EvaluationDataset, folder: Path) -> Path:
    """``answered.jsonl`` in ``folder``: the rows with the pipeline's answers, to score again
    (or with other metrics) without running the pipeline a second time."""
    from ragloop.safety import atomic_write_text

    lines = [
        json.dumps(sample.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        for sample in ds.samples
    ]
    return atomic_write_text(folder / "answered.jsonl", "".join(line + "\n" for line in lines))


def demo_set_mismatch(dataset: Any, index_dir: Path | None) -> str | None:
    """A warning when the bundled demo QA set is answered from an index of another corpus.

    Its questions (KX-217, the Kestrel robots) are about the demo base only; answered from
    another corpus's index, every score measures nothing. ``index_dir`` None: the setting's.
    """
    from ragloop.config import load_settings
    from ragloop.data import KB_DIR, QA_PATH
    from ragloop.retrievers.manifest import read_manifest

    if not isinstance(dataset, str | Path) or str(dataset) == "-":
        return None
    index_dir = Path(index_dir if index_dir is not None else load_settings().index_dir)
    if Path(dataset).resolve() != QA_PATH.resolve() or not (index_dir / "manifest.json").is_file():
        return None
    built = read_manifest(index_dir).get("corpus_dir")
    if not built or Path(built).resolve() == KB_DIR.resolve():
        return None
    return (
        f"the bundled demo QA set is answered from the index at {index_dir}, built from "
        f"{built}, not from the demo base: its scores say nothing. Index the demo "
        "(`ragloop index --demo --out DIR`) and pass --index DIR, or use your own QA set"
    )
