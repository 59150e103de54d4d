"""The reliability suite: processes, kills, canaries, hostile input; a ledger of attempts.

Every test records how many attempts of its class it made and how many failed; the totals
are printed at the end of the run (``reliability ledger``), the figures of the closing note.
"""

from __future__ import annotations

import multiprocessing
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

LEDGER: dict[str, list[int]] = defaultdict(lambda: [0, 0])
NOTES: list[str] = []


def record(kind: str, attempts: int, failures: int = 0, note: str | None = None) -> None:
    """Add ``attempts`` (and ``failures``) to the ledger line ``kind``."""
    LEDGER[kind][0] += attempts
    LEDGER[kind][1] += failures
    if note:
        NOTES.append(note)


@pytest.fixture(scope="session")
def procs() -> Any:
    """A forkserver context with ragloop preloaded: workers start fast and without threads."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(
        ["ragloop.retrievers.index", "ragloop.chat.session", "ragloop.eval.runner"]
    )
    return ctx


@pytest.fixture
def ledger() -> Any:
    return record


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """``ragloop`` in-process, in an empty working folder with its own data folder, no web
    search, and no index or corpus folder set by the environment; keywords (``input=``) go to
    ``CliRunner.invoke``."""
    from ragloop.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAGLOOP_WEB", "off")
    monkeypatch.delenv("RAGLOOP_INDEX_DIR", raising=False)
    monkeypatch.delenv("RAGLOOP_CORPUS_DIR", raising=False)
    runner = CliRunner()
    return lambda *args, **kw: runner.invoke(app, [str(a) for a in args], **kw)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not LEDGER:
        return
    write = terminalreporter.write_line
    write("")
    write("reliability ledger (class: attempts, failures)")
    for kind in sorted(LEDGER):
        attempts, failures = LEDGER[kind]
        write(f"  {kind:<58} attempts {attempts:>4}  failures {failures}")
    for note in NOTES:
        write(f"  {note}")
