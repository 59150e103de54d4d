"""Optional extras: a missing one is a clear message naming the extra to install."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from ragloop.extras import EXTRAS, MissingExtraError, has, require
from tests.test_cli_conventions import _two_config_spec

ROOT = Path(__file__).parent.parent


def _block(monkeypatch, *modules: str) -> None:
    for name in list(sys.modules):
        if any(name == m or name.startswith(m + ".") for m in modules):
            monkeypatch.delitem(sys.modules, name)
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)  # import now raises ImportError


def test_missing_tavily_names_the_web_extra(monkeypatch):
    from ragloop.retrievers.web import TavilyWebSearch

    _block(monkeypatch, "tavily")
    assert not has("web")
    with pytest.raises(MissingExtraError, match=r"pip install 'ragloop\[web\]'"):
        TavilyWebSearch("tvly-key")


def test_missing_matplotlib_skips_report_html_and_says_why(monkeypatch, tmp_path):
    from ragloop.experiments.experiment import run_experiment

    _block(monkeypatch, "matplotlib", "ragloop.experiments.report_html")
    spec = _two_config_spec(tmp_path)
    result = run_experiment(spec, out=tmp_path / "out")
    assert "report.html" not in result.files and (tmp_path / "out" / "report.md").is_file()
    assert not (tmp_path / "out" / "report.html").exists()
    assert any("pip install 'ragloop[report]'" in n for n in result.notes)


def test_every_extra_is_declared_and_dev_brings_what_tests_import():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = meta["optional-dependencies"]
    for name, (_, package, _) in EXTRAS.items():
        assert any(req.startswith(package) for req in extras[name]), name
    dev = " ".join(extras["dev"])
    assert "tavily-python" in dev and "matplotlib" in dev
    core = " ".join(meta["dependencies"])
    assert "tavily-python" not in core and "matplotlib" not in core
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert meta["license"] == "MIT" and meta["classifiers"] and meta["keywords"]
    assert require("report").__name__ == "matplotlib"
