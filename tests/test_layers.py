"""The layers hold: imports only point down, checked by import-linter, and eval stands alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).parent / "lint-imports"
#: what ``import ragloop.eval`` (and its runner, metrics, samples) must not load
ABOVE_EVAL = ("graph", "nodes", "chat", "serve", "experiments", "pipeline", "cli", "retrievers")


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=src.parent,
        timeout=300,
    )


def test_import_linter_contracts_are_kept():
    done = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "ragloop", src / "ragloop")
    schema = src / "ragloop" / "eval" / "schema.py"
    # the kind of import the layers forbid, hidden inside a function as old code did
    schema.write_text(schema.read_text() + "\n\ndef _up():\n    import ragloop.chat.session\n")
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and "ragloop.eval.schema -> ragloop.chat.session" in done.stdout


def test_importing_eval_loads_nothing_of_the_loop_or_the_app():
    code = (
        "import sys, ragloop.eval, ragloop.eval.runner, ragloop.eval.metrics, "
        "ragloop.eval.schema, ragloop.eval.results\n"
        "names = [m for m in sys.modules if m.startswith(('ragloop.', 'langgraph'))]\n"
        "print('\\n'.join(sorted(names)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    loaded = done.stdout.split()
    assert "ragloop.eval.runner" in loaded
    above = [m for m in loaded if m.split(".")[1] in ABOVE_EVAL]
    assert above == [], above
    assert not [m for m in loaded if m.startswith("langgraph")]  # no graph library either
