"""An experiment's outputs: results.csv, rows.jsonl, report.md, report.html, best.env/.toml."""

from __future__ import annotations

import csv
import json
import math
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragloop.config import Settings
from ragloop.data import KB_DIR
from ragloop.experiments.stats import fmt
from ragloop.experiments.tables import (
    Table,
    chosen_text,
    cost_table,
    footnotes,
    overview,
    prompt_table,
    quality_table,
)
from ragloop.redact import redact_text, redact_value, secret_values
from ragloop.safety import atomic_write_text, atomic_writer, claim_output_folder, folder_lock

if TYPE_CHECKING:
    from ragloop.experiments.result import ExperimentResult

#: settings never written to best.env: machine-local paths
LOCAL = {"index_dir", "data_dir"}


def _md_table(table: Table) -> list[str]:
    headers, rows = table

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(map(cell, headers)) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return out


def render_markdown(result: ExperimentResult) -> str:
    """report.md: what ran, the choice, quality, cost, prompt variants and notes."""
    spec = result.spec
    lines = [f"# Experiment: {spec.name}", ""]
    if spec.description:
        lines += [spec.description, ""]
    lines += [f"- {k}: {v}" for k, v in overview(result).items()]
    lines += ["", "## Chosen configuration", "", chosen_text(result), ""]
    if result.chosen:
        lines += [
            "Use it: `set -a; . ./best.env; set +a` before `ragloop ask`, or "
            '`load_settings(_env_file="best.env")`; prompts and all values are in best.toml.',
            "",
        ]
    lines += [
        "## Quality (mean, bootstrap 95% interval, coverage)",
        "",
        *_md_table(quality_table(result)),
    ]
    lines += ["", "## Loop and cost (per question)", "", *_md_table(cost_table(result))]
    lines += ["", "## Prompt variants: how often the loop had to correct the initial query", ""]
    lines += [*_md_table(prompt_table(result)), "", "## Notes", ""]
    lines += [f"- {n}" for n in footnotes(result)]
    return "\n".join(lines) + "\n"


def _env_value(value: Any) -> str:
    """A value both ``. best.env`` and dotenv read back unchanged (quoted only when needed)."""
    text = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return text if re.fullmatch(r"[\w.,:/@+=-]*", text) else shlex.quote(text)


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())


def best_settings(result: ExperimentResult) -> dict[str, Any]:
    """The chosen configuration's settings that matter to a run (paths and defaults left out)."""
    config = next(c for c in result.spec.configurations if c.id == result.chosen)
    values = config.settings.model_dump(mode="json", exclude=LOCAL)
    default = Settings.model_construct().model_dump(mode="json", exclude=LOCAL)
    keep = {"llm", "embeddings", "retrievers", "judge_mode", "max_iterations", "k", *config.values}
    return {k: v for k, v in values.items() if v is not None and (k in keep or v != default.get(k))}


def write_best(result: ExperimentResult, out: Path) -> dict[str, Path]:
    """best.env (RAGLOOP_* lines) and best.toml (settings, prompts) of the chosen configuration."""
    config = next(c for c in result.spec.configurations if c.id == result.chosen)
    settings = best_settings(result)
    corpus = result.spec.corpus
    head = [
        _comment(f"ragloop experiment '{result.spec.name}': {chosen_text(result)}"),
        _comment(f"corpus: {corpus} (index it with: ragloop index {shlex.quote(str(corpus))})"),
    ]
    env_lines = [*head, "# use: set -a; . ./best.env; set +a"]
    env_lines += [f"RAGLOOP_{k.upper()}={_env_value(v)}" for k, v in settings.items()]
    if corpus is not None and Path(corpus).resolve() != KB_DIR.resolve():
        env_lines.append(f"RAGLOOP_CORPUS_DIR={_env_value(str(corpus))}")
    if config.prompts:
        env_lines.append("# prompt overrides are not settings: see [prompts] in best.toml")
    toml = [*head, "", "[settings]"]
    for key, value in settings.items():
        text = ",".join(value) if isinstance(value, list) else value
        toml.append(f"{key} = {json.dumps(text, ensure_ascii=False)}")
    toml += [
        "",
        "[prompts]",
        *(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in config.prompts.items()),
    ]
    paths = {"best.env": out / "best.env", "best.toml": out / "best.toml"}
    atomic_write_text(paths["best.env"], "\n".join(env_lines) + "\n")
    atomic_write_text(paths["best.toml"], "\n".join(toml) + "\n")
    return paths


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def write_outputs(result: ExperimentResult, out: Path) -> dict[str, Path]:
    """Write every output file into ``out`` and return their paths by name."""
    from ragloop.extras import missing_message

    try:
        from ragloop.experiments.report_html import render_html
    except ImportError:  # matplotlib is the [report] extra: the other files need nothing more
        render_html = None  # type: ignore[assignment]
        result.notes.append(f"report.html not written: {missing_message('report')}")
    claim_output_folder(out)  # a folder of the user's own files is refused, never overwritten
    paths = {n: out / n for n in ("results.csv", "rows.jsonl", "report.md", "report.html")}
    secrets = secret_values()
    rows = [redact_value(_json_safe(row), secrets) for row in result.rows]  # error, reasons
    with folder_lock(out):  # each file is replaced whole (temp, fsync, rename), one run at a time
        for stale in ("best.env", "best.toml"):
            (out / stale).unlink(missing_ok=True)
        columns = list(result.records[0])
        with atomic_writer(paths["results.csv"], newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(columns)
            writer.writerows([fmt(rec.get(c)) for c in columns] for rec in result.records)
        with atomic_writer(paths["rows.jsonl"]) as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        atomic_write_text(paths["report.md"], redact_text(render_markdown(result), secrets))
        if render_html is not None:
            atomic_write_text(paths["report.html"], redact_text(render_html(result), secrets))
        else:
            del paths["report.html"]
        if result.chosen:
            paths.update(write_best(result, out))
    return paths
