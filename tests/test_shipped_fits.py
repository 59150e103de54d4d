"""The answer models ragloop ships are what their recorded command fits from the committed
rows: the provenance names the rows by their sha256, and running its command again writes
the same model (coefficients, levels, abstention fits, stop level)."""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ragloop.nodes.answer_model import shipped_files

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "ragloop" / "data"


@pytest.mark.parametrize("name", shipped_files())
def test_a_shipped_fit_names_the_committed_rows_it_was_fitted_on(name):
    provenance = json.loads((DATA / name).read_text(encoding="utf-8"))["provenance"]
    rows = ROOT / provenance["training_data"]
    assert rows.is_file(), f"{name}: its training rows {rows} are not in the repository"
    assert hashlib.sha256(rows.read_bytes()).hexdigest() == provenance["sha256"], (
        f"{name} was fitted on other rows than the committed {rows.name}: refit it with "
        f"{provenance.get('command', 'bench/calibrate.py')}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", shipped_files())
def test_a_shipped_fit_is_written_again_by_its_recorded_command(name, tmp_path):
    shipped = json.loads((DATA / name).read_text(encoding="utf-8"))
    words = shlex.split(shipped["provenance"]["command"])
    assert words[:2] == ["python", "bench/calibrate.py"]
    out = tmp_path / name
    done = subprocess.run(
        [sys.executable, *words[1:], "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    again = json.loads(out.read_text(encoding="utf-8"))
    for key in shipped:
        if key != "provenance":
            assert again[key] == shipped[key], f"{name}: {key} differs when fitted again"
    for key in ("sha256", "rows", "seed", "split", "embeddings_model", "command"):
        assert again["provenance"][key] == shipped["provenance"][key], key
