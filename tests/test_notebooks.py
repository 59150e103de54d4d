"""The notebooks run top to bottom offline on a clean kernel; committed ones carry no outputs.

Each notebook runs with nbclient in a temporary working directory, on a kernel whose spec
points at this interpreter (so the venv's ragloop is the one imported), with no RAGLOOP_*,
OpenAI or Tavily variables, no user IPython/Jupyter configuration, and an IPython startup
file that refuses socket connections to anything but the loopback address.

Strip outputs before committing with ``python tests/test_notebooks.py --strip``.
Deselect the executions with ``pytest -m "not slow"``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = {
    "01_quickstart.ipynb",
    "02_metrics.ipynb",
    "03_experiments.ipynb",
    "04_testset.ipynb",
}
KERNEL = "ragloop-notebook-test"
CELL_TIMEOUT_S = 240  # per cell; a notebook should take well under a minute in all
SCRUBBED_PREFIXES = ("RAGLOOP_", "OPENAI_", "TAVILY_")
SCRUBBED = ("MPLBACKEND", "PYTHONSTARTUP")

OFFLINE_GUARD = '''\
"""Refuse Python-level socket connections to anything but loopback (test harness only)."""
import socket

_LOCAL = {"127.0.0.1", "::1", "localhost"}
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _check(sock, address):
    host = address[0] if isinstance(address, tuple) else None
    if sock.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOCAL:
        raise OSError(f"notebook test: network access to {host!r} is blocked")


def _guarded_connect(self, address):
    _check(self, address)
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    _check(self, address)
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
'''


def _dirty_cells(nb) -> list[int]:
    """Indices of code cells that carry outputs, an execution count or execution timings."""
    return [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        and (
            cell.get("outputs")
            or cell.get("execution_count") is not None
            or "execution" in cell.get("metadata", {})
        )
    ]


def strip_outputs(path: Path) -> bool:
    """Clear outputs, execution counts and timings of ``path`` in place; True if it changed."""
    nb = nbformat.read(path, as_version=4)
    if not _dirty_cells(nb):
        return False
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return True


def test_every_walkthrough_is_there():
    assert {p.name for p in NOTEBOOKS} >= EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_is_valid_and_has_no_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = _dirty_cells(nb)
    assert not dirty, (
        f"{path.name}: code cells {dirty} carry outputs or execution counts; "
        "strip them with `python tests/test_notebooks.py --strip`"
    )


@pytest.fixture(scope="module")
def clean_jupyter(tmp_path_factory):
    """Jupyter/IPython folders of our own: the kernel spec, the offline guard, no user config."""
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "data" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ragloop notebook test",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-offline-guard.py").write_text(OFFLINE_GUARD, encoding="utf-8")
    (root / "config").mkdir()
    (root / "runtime").mkdir()
    return root


@pytest.fixture
def kernel_env(clean_jupyter, monkeypatch):
    """The environment the kernel inherits: isolated Jupyter folders, no keys, no overrides."""
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED:
            monkeypatch.delenv(name)
    monkeypatch.setenv("JUPYTER_PATH", str(clean_jupyter / "data"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(clean_jupyter / "config"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(clean_jupyter / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(clean_jupyter / "ipython"))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", os.environ.get("OPENBLAS_NUM_THREADS", "1"))


def _execute(nb, workdir: Path):
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(workdir)}},
    )
    return client.execute()


@pytest.mark.slow
def test_kernel_is_this_interpreter_and_offline(kernel_env, tmp_path):
    cell = nbformat.v4.new_code_cell(
        "import socket, sys\n"
        "print(sys.executable)\n"
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 443), timeout=2)\n"
        "except OSError as exc:\n"
        "    print(exc)\n"
    )
    nb = _execute(nbformat.v4.new_notebook(cells=[cell]), tmp_path)
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert Path(text.splitlines()[0]) == Path(sys.executable)
    assert "network access to '192.0.2.1' is blocked" in text


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom_offline(path: Path, kernel_env, tmp_path):
    nb = nbformat.read(path, as_version=4)
    _execute(nb, tmp_path)  # raises CellExecutionError naming the failing cell
    errors = [
        o
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.output_type == "error"
    ]
    assert not errors
    noise = [
        o.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.output_type == "stream" and "TqdmWarning" in o.get("text", "")
    ]
    assert not noise, noise  # a new user's first notebook shows no library warnings
    assert sorted(os.listdir(tmp_path)) == [], "a notebook wrote into its working directory"


if __name__ == "__main__":
    if sys.argv[1:] != ["--strip"]:
        sys.exit("usage: python tests/test_notebooks.py --strip")
    for notebook in NOTEBOOKS:
        if strip_outputs(notebook):
            print(f"stripped {notebook.relative_to(NOTEBOOK_DIR.parent)}")
