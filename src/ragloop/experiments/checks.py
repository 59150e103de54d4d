"""Checks of an experiment spec's paths, dataset and metrics, run before any work starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragloop.data import KB_DIR, QA_PATH, WEB_DIR
from ragloop.errors import ConfigError, RagloopError
from ragloop.eval.metrics.base import get_metric_class
from ragloop.eval.prepare import resolve_name
from ragloop.eval.schema import EvaluationDataset, SingleTurnSample
from ragloop.retrievers.corpus import corpus_files
from ragloop.safety.paths import confine, confined_name
from ragloop.testset.cached import cached_testset, is_testset

#: columns the graph fills in for every row; the others must come from the dataset
PRODUCED = ("user_input", "response", "retrieved_contexts")
DEMO = "demo"


def spec_error(where: Path, msg: str) -> ConfigError:
    """A ConfigError that names the spec file first."""
    return ConfigError(f"{where}: {msg}")


def _path(raw: dict[str, Any], key: str, where: Path) -> Path | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise spec_error(where, f"'{key}' must be a path (relative to the spec's folder)")
    path = Path(value).expanduser()
    return path if path.is_absolute() else where.parent / path


def check_paths(raw: dict[str, Any], where: Path) -> dict[str, Any]:
    """Dataset, corpus and web corpus resolved against the spec's folder; each must exist."""
    if "dataset" not in raw:
        raise spec_error(
            where, f'\'dataset\' is missing: name a .jsonl/.csv file, "{DEMO}" or "testset:N"'
        )
    generated = is_testset(raw["dataset"])  # dataset = "testset:N": made below from the corpus
    dataset = QA_PATH if raw["dataset"] == DEMO or generated else _path(raw, "dataset", where)
    assert dataset is not None
    if not dataset.is_file():
        raise spec_error(
            where, f"dataset not found: {dataset} (paths are relative to the spec's folder)"
        )
    corpus = _path(raw, "corpus", where) or KB_DIR
    web = _path(raw, "web_corpus", where) or WEB_DIR
    for key, folder in (("corpus", corpus), ("web_corpus", web)):
        if not folder.is_dir():
            raise spec_error(where, f"{key} folder not found: {folder}")
        if not corpus_files(folder):
            raise spec_error(
                where, f"{key} folder {folder} has no .md/.txt/.rst/.html file to index"
            )
    name = spec_name(raw, where)
    cache_dir = _written(raw, "cache_dir", where) or Path(".ragloop/cache")
    if generated:
        seed = raw.get("seed", 0)
        try:
            seed = seed if isinstance(seed, int) else 0
            fixed = raw.get("settings")
            fixed = fixed if isinstance(fixed, dict) else {}
            dataset = cached_testset(raw["dataset"], corpus, cache_dir, seed, fixed)
        except RagloopError as exc:
            raise spec_error(where, str(exc)) from None
    return {
        "dataset": dataset,
        "corpus": corpus,
        "web_corpus": web,
        "cache_dir": cache_dir,
        "out": _written(raw, "out", where) or Path(".ragloop/experiments") / name,
    }


def spec_name(raw: dict[str, Any], where: Path) -> str:
    """The experiment's name; it names a folder, so it must be one plain path component."""
    try:
        return confined_name(str(raw.get("name", where.stem)), "'name'")
    except ConfigError as exc:
        raise spec_error(where, str(exc)) from None


def _written(raw: dict[str, Any], key: str, where: Path) -> Path | None:
    """A folder the spec has ragloop write to: inside the spec's folder or the working folder."""
    path = _path(raw, key, where)
    if path is None:
        return None
    for base in (where.parent, Path.cwd()):
        try:
            return confine(base, path, f"'{key}'")
        except ConfigError:
            continue
    raise spec_error(
        where,
        f"'{key}' = {raw[key]!r} points outside the spec's folder and the working folder: "
        "keep what an experiment writes inside them (or pass --out)",
    )


def usable_rows(ds: EvaluationDataset) -> tuple[list[tuple[int, SingleTurnSample]], list[str]]:
    """Single-turn rows with a question, by original index, and why the others are skipped."""
    rows, skipped = [], [f"row {e.index}: {e.reason}" for e in ds.errors]
    for index, sample in zip(ds.indices, ds.samples, strict=True):
        if not isinstance(sample, SingleTurnSample):
            skipped.append(
                f"row {index}: a conversation (multi-turn); the graph takes one question"
            )
        elif not (sample.user_input or "").strip():
            skipped.append(f"row {index}: user_input is empty")
        else:
            rows.append((index, sample))
    return rows, skipped


def check_dataset(path: Path, where: Path) -> EvaluationDataset:
    """Load the dataset; it must have at least one row the graph can answer."""
    try:
        ds = EvaluationDataset.load(path)
    except RagloopError as exc:
        raise spec_error(where, f"dataset {path}: {exc}") from None
    if not usable_rows(ds)[0]:
        raise spec_error(where, f"dataset {path} has no row with a user_input (question) to run")
    return ds


def _has(rows: list[tuple[int, SingleTurnSample]], column: str) -> bool:
    for _, sample in rows:
        value = getattr(sample, column, None)
        if value is not None and (not isinstance(value, str | list | dict) or value):
            return True
    return False


def check_metrics(
    names: Any, ds: EvaluationDataset, has_llm: bool, where: Path
) -> tuple[list[str], dict[str, str], list[str]]:
    """Metric labels as they will run, aliases (name as written -> label), and notes."""
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise spec_error(where, 'metrics must be a list of metric names, e.g. ["answer_relevancy"]')
    rows, _ = usable_rows(ds)
    labels: list[str] = []
    aliases: dict[str, str] = {}
    notes: list[str] = []
    for name in names:
        label, note = resolve_name(name, has_llm)
        try:
            cls = get_metric_class(label)
        except RagloopError as exc:
            raise spec_error(where, f"metrics: {exc}") from None
        if cls.needs_llm and not has_llm:
            raise spec_error(
                where,
                f"metric '{name}' needs an LLM judge: set judge_llm (or llm) to "
                "'openai:<model>', or use an offline/non-LLM metric",
            )
        if cls.multi_turn:
            raise spec_error(
                where,
                f"metric '{name}' scores conversations; the graph answers single "
                "questions: use a single-turn metric",
            )
        for column in cls.required_columns:
            if column not in PRODUCED and not _has(rows, column):
                raise spec_error(
                    where,
                    f"metric '{name}' needs column '{column}', which no row of "
                    f"the dataset has: add {column} to the dataset or drop the metric",
                )
        aliases[name] = label
        if note:
            notes.append(
                f"{name} ran as {label}: judge_llm is 'none'; set it (or llm) to "
                "'openai:<model>' for the LLM judge"
            )
        if label not in labels:
            labels.append(label)
    return labels, aliases, notes
