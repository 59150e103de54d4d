"""The experiment spec (TOML), read and checked whole before any work starts."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloop.config import Settings
from ragloop.errors import ConfigError
from ragloop.eval.schema import EvaluationDataset
from ragloop.experiments.checks import (
    check_dataset,
    check_metrics,
    check_paths,
    spec_error,
    spec_name,
)
from ragloop.experiments.grid import Configuration, checked_settings, expand_grid
from ragloop.experiments.objective import Objective, parse_objective

__all__ = ["Configuration", "ExperimentSpec", "Objective", "load_spec"]

TOP_KEYS = {
    "name", "description", "dataset", "corpus", "web_corpus", "llm", "judge_llm", "embeddings",
    "metrics", "settings", "grid", "objective", "concurrency", "eval_concurrency", "seed",
    "bootstrap", "cache_dir", "out",
}  # fmt: skip
#: settings a spec sets elsewhere (top-level keys) or that belong to the machine, not the run
_NOT_IN_SETTINGS = {"index_dir", "data_dir", "web_corpus_dir", "llm", "embeddings"}


@dataclass
class ExperimentSpec:
    """A checked spec: every path exists, every name is known, every configuration is valid."""

    path: Path
    name: str
    description: str
    dataset_path: Path
    dataset: EvaluationDataset
    corpus: Path
    web_corpus: Path | None
    llm: str
    judge_llm: str
    embeddings: str
    metrics: list[str]
    settings: Settings
    configurations: list[Configuration]
    objective: Objective
    concurrency: int = 1
    eval_concurrency: int = 16
    seed: int = 0
    bootstrap: int = 1000
    cache_dir: Path = Path(".ragloop/cache")
    out: Path = Path(".ragloop/experiments")
    notes: list[str] = field(default_factory=list)


def _int(raw: dict[str, Any], key: str, default: int, low: int, where: Path) -> int:
    value = raw.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise spec_error(where, f"'{key}' must be an integer >= {low} (got {value!r})")
    return value


def _base_settings(raw: dict[str, Any], web_corpus: Path, where: Path) -> dict[str, Any]:
    """Every setting explicit (so no RAGLOOP_* variable of the shell leaks into the run)."""
    fixed = raw.get("settings", {})
    if not isinstance(fixed, dict):
        raise spec_error(where, "[settings] must be a table of setting = value")
    bad = (set(fixed) & _NOT_IN_SETTINGS) | (set(fixed) - set(Settings.model_fields))
    if bad:
        raise spec_error(
            where,
            f"[settings] cannot hold {', '.join(sorted(bad))}: use the top-level keys llm, "
            "embeddings, corpus, web_corpus and cache_dir, or a known setting",
        )
    values = {n: f.get_default(call_default_factory=True) for n, f in Settings.model_fields.items()}
    values.update(fixed)
    values["llm"] = raw.get("llm", "none")
    values["embeddings"] = raw.get("embeddings", "wordllama")
    values["web_corpus_dir"] = web_corpus if "web_corpus" in raw else None
    return values


def _notes(settings: Settings, configs: list[Configuration]) -> list[str]:
    notes = []
    if settings.llm == "none" and any(c.prompts for c in configs):
        notes.append(
            "llm = 'none': the offline strategies ignore prompt text, so prompt variants "
            "run identically; set llm to compare them"
        )
    return notes


def load_spec(path: str | Path, overrides: Mapping[str, Any] | None = None) -> ExperimentSpec:
    """Read and check an experiment spec; any problem is a ConfigError naming the file and it.

    ``overrides`` (the command's flags) replace settings of the spec's ``[settings]``; a
    ``[grid]`` axis still varies its own setting.
    """
    where = Path(path)
    if not where.is_file():
        raise ConfigError(f"experiment spec not found: {where}; pass the path of a .toml file")
    try:
        raw = tomllib.loads(where.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise spec_error(where, f"not valid TOML: {exc}") from None
    unknown = set(raw) - TOP_KEYS
    if unknown:
        known = ", ".join(sorted(TOP_KEYS))
        raise spec_error(where, f"unknown key(s) {', '.join(sorted(unknown))}; known: {known}")
    paths = check_paths(raw, where)
    dataset = check_dataset(paths["dataset"], where)
    base = _base_settings(raw, paths["web_corpus"], where)
    settings = checked_settings(base, where, "settings")
    if overrides:
        base.update(overrides)
        settings = checked_settings(base, where, "command-line flags")
    judge_llm = str(raw.get("judge_llm", settings.llm))
    checked_settings({**base, "llm": judge_llm}, where, "judge_llm")
    metrics, aliases, notes = check_metrics(raw.get("metrics"), dataset, judge_llm != "none", where)
    configs = expand_grid(raw.get("grid"), base, where)
    return ExperimentSpec(
        path=where,
        name=spec_name(raw, where),
        description=str(raw.get("description", "")),
        dataset_path=paths["dataset"],
        dataset=dataset,
        corpus=paths["corpus"],
        web_corpus=paths["web_corpus"],
        llm=settings.llm,
        judge_llm=judge_llm,
        embeddings=settings.embeddings,
        metrics=metrics,
        settings=settings,
        configurations=configs,
        objective=parse_objective(raw.get("objective"), metrics, aliases, where),
        concurrency=_int(raw, "concurrency", 1 if settings.llm == "none" else 4, 1, where),
        eval_concurrency=_int(raw, "eval_concurrency", 16, 1, where),
        seed=_int(raw, "seed", 0, 0, where),
        bootstrap=_int(raw, "bootstrap", 1000, 100, where),
        cache_dir=paths["cache_dir"],
        out=paths["out"],
        notes=notes + _notes(settings, configs),
    )
