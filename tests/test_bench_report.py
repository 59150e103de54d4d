"""bench/report.py writes docs/benchmarks.md: a header naming commit, date and machine, then
every bench's output, failures included and reported by the exit status."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import report  # noqa: E402


def _benches(folder: Path) -> None:
    (folder / "fast.py").write_text('"""Prints one figure."""\nprint("hit@5 0.5")\n')
    (folder / "broken.py").write_text(
        '"""Fails after printing."""\nimport sys\nprint("```partial")\nsys.exit(2)\n'
    )
    (folder / "_helper.py").write_text('raise SystemExit("a helper is never run")\n')


def test_the_page_names_commit_date_and_machine_and_keeps_each_output(tmp_path, capsys):
    _benches(tmp_path)
    out = tmp_path / "docs" / "benchmarks.md"
    rc = report.main(["--folder", str(tmp_path), "--out", str(out)])
    page = out.read_text(encoding="utf-8")
    assert rc == 1  # one bench failed
    for key in ("commit", "date", "platform", "cpus"):
        assert f"- {key}: `" in page
    assert "hit@5 0.5" in page and "Prints one figure." in page
    assert "## `bench/broken.py` — **failed (exit 2)**" in page
    assert "helper" not in page
    # a bench's own fence cannot close the page's block early
    assert page.count("```text") == 2 and page.count("```") == 4
    assert "hit@5 0.5" in capsys.readouterr().out  # shown while it runs, too


def test_only_runs_the_named_benches_and_refuses_an_unknown_one(tmp_path):
    _benches(tmp_path)
    out = tmp_path / "b.md"
    assert report.main(["--folder", str(tmp_path), "--out", str(out), "--only", "fast"]) == 0
    assert "broken" not in out.read_text(encoding="utf-8")
    with pytest.raises(SystemExit, match="unknown bench nope; known: broken, fast"):
        report.main(["--folder", str(tmp_path), "--out", str(out), "--only", "nope"])


def test_the_repository_benches_exclude_helpers_and_the_report_itself():
    names = [p.stem for p in report.benches(report.BENCH_DIR)]
    assert names and "report" not in names and not any(n.startswith("_") for n in names)
