"""Experiments on the fixture corpus: results table, reports, the choice, the cache, bad specs."""

from __future__ import annotations

import csv
import json
import math
import operator
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragloop.config import Settings
from ragloop.errors import ConfigError
from ragloop.experiments.experiment import run_experiment
from ragloop.experiments.spec import load_spec
from ragloop.experiments.stats import bootstrap_ci
from tests.conftest import CORPUS, FIXTURES

QA = FIXTURES / "qa.jsonl"
OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
CONSTRAINT = "mean_iterations <= 1.5"
METRICS = ["answer_relevancy", "context_recall", "non_llm_context_recall", "rouge_score"]


def write_spec(folder: Path, **keys: Any) -> Path:
    """A 2x2x2 grid on the fixture corpus; ``keys`` replace top-level lines (None drops one).

    The dense-only order cannot swap retrievers, so the loop has to rewrite queries.
    """
    top = {
        "name": '"fixture"',
        "dataset": json.dumps(str(QA)),
        "corpus": json.dumps(str(CORPUS)),
        "metrics": json.dumps(METRICS),
        "cache_dir": json.dumps(str(folder / "cache")),
        "seed": "3",
        "bootstrap": "200",
    }
    top.update(keys)
    lines = [f"{k} = {v}" for k, v in top.items() if v is not None]
    lines += [
        "[settings]",
        'web = "off"',
        "chunk_size = 400",
        "chunk_overlap = 50",
        "[grid]",
        'retrievers = ["dense", "sparse,dense,hybrid"]',
        'judge_mode = ["standard", "second_response"]',
        "max_iterations = [2]",
        "[grid.prompts.draft]",
        'default = ""',
        'terse = "Answer in one short sentence."',
        "[objective]",
        'maximize = "answer_relevancy"',
        f"constraints = [{json.dumps(CONSTRAINT)}]",
    ]
    path = folder / "spec.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def md_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Every pipe table of a Markdown text, keyed by the heading above it."""
    tables: dict[str, list[dict[str, str]]] = {}
    heading, lines = "", text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## "):
            heading = line[3:]
        if line.startswith("| ") and lines[i + 1].startswith("|---"):
            headers = [c.strip() for c in line.strip("|").split(" | ")]
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("| "):
                    break
                cells = [c.strip() for c in row.strip("|").split(" | ")]
                rows.append(dict(zip(headers, cells, strict=True)))
            tables[heading] = rows
    return tables


def rows_of(result: Any, variant: str) -> list[dict[str, Any]]:
    ids = {c.id for c in result.spec.configurations if c.prompt_names["draft"] == variant}
    return [r for r in result.rows if r["config"] in ids]


@pytest.fixture(scope="module")
def first(tmp_path_factory, wordllama):
    folder = tmp_path_factory.mktemp("experiment")
    spec = write_spec(folder)
    ticks: list[tuple[int, int]] = []
    result = run_experiment(
        spec,
        out=folder / "out",
        embeddings=wordllama,
        progress=lambda done, total, _: ticks.append((done, total)),
    )
    return folder, spec, result, ticks


def test_every_configuration_is_in_results_csv(first):
    folder, spec, _, _ = first
    table = read_csv(folder / "out" / "results.csv")
    configs = load_spec(spec).configurations
    assert len(configs) == 8  # 2 retriever orders x 2 judge modes x 2 draft prompts
    assert [r["config"] for r in table] == [c.id for c in configs]
    assert {(r["retrievers"], r["judge_mode"], r["prompt_draft"]) for r in table} == {
        (",".join(c.settings.retrievers), c.settings.judge_mode, c.prompt_names["draft"])
        for c in configs
    }
    for row in table:
        assert row["rows"] == "10"
        assert 0.0 < float(row["offline_answer_relevancy_coverage"]) <= 1.0
        lo, mean, hi = (float(row[f"rouge_score{s}"]) for s in ("_lo", "", "_hi"))
        assert lo <= mean <= hi
    lines = (folder / "out" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8 * 10
    assert {json.loads(line)["config"] for line in lines} == {c.id for c in configs}


def test_report_md_numbers_equal_results_csv(first):
    folder, _, _, _ = first
    table = {r["config"]: r for r in read_csv(folder / "out" / "results.csv")}
    report = (folder / "out" / "report.md").read_text(encoding="utf-8")
    tables = md_tables(report)
    quality = tables["Quality (mean, bootstrap 95% interval, coverage)"]
    cost = tables["Loop and cost (per question)"]
    assert [r["config"] for r in quality] == [r["config"] for r in cost] == list(table)
    compared = 0
    for row in quality + cost:
        csv_row = table[row["config"]]
        for header, cell in row.items():
            if header.endswith(" minus best (paired 95% CI)"):
                lo, hi = csv_row["vs_best_lo"], csv_row["vs_best_hi"]
                assert cell == (f"{csv_row['vs_best']} [{lo}, {hi}]" if csv_row["vs_best"] else "")
            elif header.endswith(" 95% CI"):
                metric = header.removesuffix(" 95% CI")
                assert cell == f"[{csv_row[metric + '_lo']}, {csv_row[metric + '_hi']}]"
            else:
                assert cell == csv_row[header.replace(" coverage", "_coverage")], header
            compared += 1
    assert compared == 8 * (2 + 4 * 3 + 1) + 8 * (1 + 14)  # quality + loop-and-cost cells
    chosen = next(r for r in table.values() if r["chosen"] == "yes")
    assert f"offline_answer_relevancy = {chosen['offline_answer_relevancy']} [" in report


def test_chosen_configuration_is_what_the_objective_picks(first):
    folder, _, result, _ = first
    table = read_csv(folder / "out" / "results.csv")
    name, op, bound = CONSTRAINT.split()
    feasible = [r for r in table if OPS[op](float(r[name]), float(bound))]
    assert 0 < len(feasible) < len(table)  # the constraint really rules some out
    assert [r["feasible"] == "yes" for r in table] == [r in feasible for r in table]
    best = max(float(r["offline_answer_relevancy"]) for r in feasible)
    top = [r for r in table if r["best"] == "yes"]
    assert len(top) == 1 and float(top[0]["offline_answer_relevancy"]) == best
    chosen = [r for r in table if r["chosen"] == "yes"]
    assert len(chosen) == 1 and chosen[0] in feasible
    assert chosen[0]["within_noise"] == "yes"  # the best, or tied with it by the paired test
    tied = [r for r in feasible if r["within_noise"] == "yes"]
    cheapest = min(float(r["llm_calls_per_question"]) for r in tied)
    assert float(chosen[0]["llm_calls_per_question"]) == cheapest
    assert result.chosen == chosen[0]["config"]
    assert "paired bootstrap" in result.verdict
    env = Settings(_env_file=folder / "out" / "best.env")
    assert ",".join(env.retrievers) == chosen[0]["retrievers"]
    assert env.judge_mode == chosen[0]["judge_mode"] and env.web == "off"
    assert (env.chunk_size, env.max_iterations) == (400, 2)
    assert env.corpus_dir is not None and env.corpus_dir.name == "corpus"  # not the demo base
    best_toml = tomllib.loads((folder / "out" / "best.toml").read_text(encoding="utf-8"))
    assert best_toml["settings"]["retrievers"] == chosen[0]["retrievers"]
    wanted = {"terse": {"draft": "Answer in one short sentence."}, "default": {}}
    assert best_toml["prompts"] == wanted[chosen[0]["prompt_draft"]]


def test_rerun_is_served_from_the_cache(first, wordllama):
    folder, spec, result, _ = first
    assert result.totals["graph_runs"] == 80 and result.totals["graph_cached"] == 0
    again = run_experiment(spec, out=folder / "again", embeddings=wordllama)
    assert again.totals["graph_runs"] == 0 and again.totals["graph_cached"] == 80
    assert again.totals["eval_jobs"] == result.totals["eval_jobs"] > 0
    assert again.totals["eval_resumed"] + again.totals["eval_shared"] == again.totals["eval_jobs"]
    before = (folder / "out" / "results.csv").read_text(encoding="utf-8")
    assert (folder / "again" / "results.csv").read_text(encoding="utf-8") == before


def test_a_first_run_reuses_nothing_from_earlier_runs(first):
    """Configurations with equal answers share their scores; that is no resumed work."""
    folder, _, result, _ = first
    assert result.totals["eval_resumed"] == 0 and result.totals["graph_cached"] == 0
    assert result.totals["eval_shared"] > 0  # the draft prompt changes nothing offline
    report = (folder / "out" / "report.md").read_text(encoding="utf-8")
    assert "0 were reused from earlier runs" in report
    assert f"{result.totals['eval_shared']} had the same answer and contexts" in report


def test_an_interrupted_run_resumes(tmp_path, wordllama, monkeypatch):
    import ragloop.experiments.runs as runs

    spec = write_spec(tmp_path)
    real, calls = runs.aevaluate, []

    async def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("interrupted")
        return await real(*args, **kwargs)

    monkeypatch.setattr(runs, "aevaluate", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        run_experiment(spec, out=tmp_path / "never", embeddings=wordllama)
    assert not (tmp_path / "never").exists()
    monkeypatch.setattr(runs, "aevaluate", real)
    resumed = run_experiment(spec, out=tmp_path / "out", embeddings=wordllama)
    assert resumed.totals["graph_cached"] == 30 and resumed.totals["graph_runs"] == 50
    assert resumed.totals["eval_resumed"] >= 2 * 10  # the two configurations scored before


def test_progress_covers_the_whole_grid(first):
    *_, ticks = first
    done = [d for d, _ in ticks]
    assert done == sorted(done) and ticks[-1][0] == ticks[-1][1] > 0


def test_prompt_variants_report_rewrites(first):
    folder, _, result, _ = first
    variants = {(p["kind"], p["variant"]): p for p in result.prompts}
    assert set(variants) == {("draft", "default"), ("draft", "terse")}
    for (_, name), p in variants.items():
        rows = rows_of(result, name)
        rewrites = [[a["query"] for a in r["actions"] if a["action"] == "rewrite"] for r in rows]
        pairs = {(r["user_input"], q) for r, qs in zip(rows, rewrites, strict=True) for q in qs}
        assert p["runs"] == len(rows) == 40
        assert len(p["examples"]) == min(3, len(pairs))
        assert p["rewrite_share"] == round(sum(bool(qs) for qs in rewrites) / len(rows), 4)
    assert all(p["examples"] for p in variants.values())
    report = (folder / "out" / "report.md").read_text(encoding="utf-8")
    assert "| draft | terse | 40 |" in report
    assert f"{p['examples'][0]['question']} → {p['examples'][0]['rewritten']}" in report
    assert any("offline strategies ignore prompt text" in n for n in result.notes)


def test_bootstrap_interval_is_seeded_and_holds_the_mean():
    values = [0.1, 0.9, 0.4, 0.7, 0.3, 0.8, 0.2]
    lo, hi = bootstrap_ci(values, 500, seed=1)
    assert (lo, hi) == bootstrap_ci(values, 500, seed=1)
    assert lo < sum(values) / len(values) < hi
    assert bootstrap_ci([0.5, 0.5, 0.5], 500, seed=1) == (0.5, 0.5)
    assert all(math.isnan(v) for v in bootstrap_ci([math.nan], 500, seed=1))


def _without_reference_contexts(folder: Path) -> str:
    path = folder / "bare.jsonl"
    rows = [json.loads(line) for line in QA.read_text(encoding="utf-8").splitlines()]
    text = "".join(
        json.dumps({"user_input": r["user_input"], "reference": r["reference"]}) + "\n"
        for r in rows
    )
    path.write_text(text, encoding="utf-8")
    return json.dumps(str(path))


BAD_SPECS = {
    "unknown retriever": ({}, "unknown retriever 'bm42'"),
    "missing dataset": ({"dataset": '"nowhere/qa.jsonl"'}, "dataset not found"),
    "column the dataset lacks": ({}, "needs column 'reference_contexts'"),
    "unknown metric": ({"metrics": '["answer_relevancy", "blue_score"]'}, "blue_score"),
    "objective not measured": ({"metrics": '["rouge_score"]'}, "objective 'answer_relevancy'"),
    "missing corpus": ({"corpus": '"no-such-folder"'}, "corpus folder not found"),
}


@pytest.mark.parametrize("case", list(BAD_SPECS))
def test_bad_spec_fails_before_any_work(case, tmp_path, monkeypatch):
    import ragloop.pipeline

    keys, needle = BAD_SPECS[case]
    if case == "column the dataset lacks":
        keys = {"dataset": _without_reference_contexts(tmp_path)}
    spec = write_spec(tmp_path, **keys)
    if case == "unknown retriever":
        spec.write_text(spec.read_text().replace('"sparse,dense,hybrid"', '"sparse,bm42"'))

    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the pipeline was built for a bad spec")

    monkeypatch.setattr(ragloop.pipeline, "build_pipeline", no_work)
    with pytest.raises(ConfigError, match=re.escape(needle)) as info:
        run_experiment(spec, out=tmp_path / "out")
    assert str(spec) in str(info.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_cli_runs_a_spec_and_reports_bad_ones(tmp_path, first):
    from ragloop.cli import app

    _, spec, result, _ = first
    runner = CliRunner()
    ok = runner.invoke(app, ["experiment", str(spec), "--out", str(tmp_path / "cli"), "--quiet"])
    assert ok.exit_code == 0, ok.output
    # its own run (the spec's embeddings): offline ties go to the lowest latency it measured
    chosen = next(r for r in read_csv(tmp_path / "cli" / "results.csv") if r["chosen"] == "yes")
    assert f"chosen: {chosen['config']} (" in ok.output and result.chosen
    assert (tmp_path / "cli" / "report.html").is_file()
    assert (tmp_path / "cli" / "best.env").is_file()
    (tmp_path / "bad").mkdir()
    bad = write_spec(tmp_path / "bad", metrics='["faithfulness"]')
    failed = runner.invoke(app, ["experiment", str(bad), "--quiet"])
    assert failed.exit_code == 2
    assert "faithfulness" in failed.output and "needs an LLM judge" in failed.output


def test_llm_experiment_counts_calls_uses_prompt_variants_and_caches(tmp_path, openai_server):
    from tests.fakes.fixtures import FAKE_KEY
    from tests.test_graph_llm import respond

    terse = "TERSE: answer in one sentence."

    def reply(body: dict) -> Any:
        if body["messages"][0]["content"].startswith(terse):
            return {"answer": "Not sure.", "noncommittal": True, "needs_retrieval": True}
        return respond(body)

    openai_server.default.reply = reply
    spec = write_spec(tmp_path, llm='"openai:fake-model"', metrics='["answer_relevancy"]')
    text = spec.read_text().replace('"Answer in one short sentence."', json.dumps(terse))
    spec.write_text(text.replace('judge_mode = ["standard", "second_response"]', ""))
    env = openai_server.env(FAKE_KEY)
    result = run_experiment(spec, out=tmp_path / "out", env=env)
    assert len(result.records) == 4 and result.totals["graph_errors"] == 0
    assert all(
        r["llm_calls_per_question"] >= 3 and r["tokens_per_question"] > 0 for r in result.records
    )
    drafts = [
        r
        for r in openai_server.chat_requests()
        if r.body["messages"][0]["content"].startswith(terse)
    ]
    assert len(drafts) == 2 * 10  # the terse variant's configurations, one draft per row
    assert result.totals["eval_llm_calls"] > 0
    for path in result.files.values():
        assert FAKE_KEY not in path.read_text(encoding="utf-8")
    calls = openai_server.count()
    again = run_experiment(spec, out=tmp_path / "again", env=env)
    assert openai_server.count() == calls  # graph runs and scores all came from the cache
    assert again.totals["graph_cached"] == 40 and again.totals["eval_llm_calls"] == 0


def test_shipped_demo_spec_is_valid():
    spec = load_spec(Path(__file__).parent.parent / "experiments" / "demo.toml")
    firsts = {c.settings.retrievers[0] for c in spec.configurations}
    assert firsts == {"dense", "sparse", "hybrid"}
    assert {c.settings.judge_mode for c in spec.configurations} == {"standard", "second_response"}
    assert spec.settings.llm == "none" and len(spec.dataset) == 96
