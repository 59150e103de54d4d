"""The grid of an experiment spec: every combination of axis values and prompt variants."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragloop.config import RUN_FIELDS, Context, Settings, load_settings
from ragloop.errors import RagloopError
from ragloop.experiments.checks import spec_error

#: grid axes: the per-run settings (Context fields, so the winner fits a settings file)
AXES = RUN_FIELDS
PROMPT_KINDS = ("draft", "answer", "rewrite")
MAX_CONFIGURATIONS = 200


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: its settings, the axis values that made it, its prompt variants."""

    id: str
    label: str
    values: dict[str, Any]
    prompt_names: dict[str, str]
    prompts: dict[str, str]
    settings: Settings

    def context(self) -> Context:
        """The graph context this configuration runs with."""
        return Context.from_settings(self.settings, prompts=dict(self.prompts))


def checked_settings(values: dict[str, Any], where: Path, what: str) -> Settings:
    """Settings from explicit values; a bad one is an error naming the spec and the value."""
    try:
        return load_settings(**values)
    except RagloopError as exc:
        raise spec_error(where, f"{what}: {exc}".replace(" (env RAGLOOP_", " (RAGLOOP_")) from None


def _label_part(key: str, value: Any, settings: Settings) -> str:
    if key == "retrievers":
        return ">".join(settings.retrievers)
    if key.startswith("prompt_"):
        return f"{key.removeprefix('prompt_')}:{value}"
    return str(value) if isinstance(value, str) else f"{key}={value}"


def _prompt_variants(raw: Any, where: Path) -> dict[str, dict[str, str]]:
    if not isinstance(raw, dict):
        raise spec_error(where, "[grid.prompts] must hold tables like [grid.prompts.draft]")
    variants = {}
    for kind, table in raw.items():
        if kind not in PROMPT_KINDS:
            raise spec_error(
                where, f"unknown prompt kind '{kind}'; known: {', '.join(PROMPT_KINDS)}"
            )
        if (
            not isinstance(table, dict)
            or not table
            or not all(isinstance(t, str) for t in table.values())
        ):
            raise spec_error(
                where,
                f"[grid.prompts.{kind}] must map variant names to prompt text "
                '(an empty text, e.g. default = "", keeps the built-in prompt)',
            )
        variants[kind] = table
    return variants


def expand_grid(raw: Any, base: dict[str, Any], where: Path) -> list[Configuration]:
    """Every configuration of the [grid] table, each validated as Settings."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise spec_error(where, "[grid] must be a table of axis = [values]")
    grid = dict(raw)
    variants = _prompt_variants(grid.pop("prompts", {}), where)
    for key in grid:
        if key not in AXES:
            raise spec_error(
                where, f"unknown grid axis '{key}'; known axes: {', '.join(AXES)}, prompts"
            )
    axes = {k: grid[k] if isinstance(grid[k], list) else [grid[k]] for k in AXES if k in grid}
    for key, values in axes.items():
        if not values:
            raise spec_error(where, f"grid axis '{key}' is empty: give at least one value")
    names = [*axes, *(f"prompt_{k}" for k in variants)]
    choices = [*axes.values(), *(list(v) for v in variants.values())]
    combos = list(itertools.product(*choices))
    if len(combos) > MAX_CONFIGURATIONS:
        raise spec_error(
            where,
            f"the grid has {len(combos)} configurations, more than "
            f"{MAX_CONFIGURATIONS}: drop values from an axis",
        )
    varying = [n for n, c in zip(names, choices, strict=True) if len(c) > 1]
    configs = []
    for n, combo in enumerate(combos, start=1):
        point = dict(zip(names, combo, strict=True))
        values = {k: v for k, v in point.items() if not k.startswith("prompt_")}
        if isinstance(values.get("retrievers"), list):
            values["retrievers"] = ",".join(map(str, values["retrievers"]))
        what = "[grid] " + ", ".join(f"{k} = {v!r}" for k, v in values.items())
        settings = checked_settings({**base, **values}, where, what)
        chosen = {k: str(point[f"prompt_{k}"]) for k in variants}
        texts = {k: variants[k][v] for k, v in chosen.items() if variants[k][v].strip()}
        label = " · ".join(_label_part(k, point[k], settings) for k in varying) or "baseline"
        configs.append(Configuration(f"c{n}", label, values, chosen, texts, settings))
    return configs
