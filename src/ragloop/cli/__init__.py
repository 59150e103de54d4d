"""The ``ragloop`` command line: the only place that prints or turns errors into exit codes.

Each command family lives in its own module of this package and registers on ``app``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragloop.errors import RagloopError

app = typer.Typer(
    help="ragloop: a self-correcting RAG pipeline with its evaluation built in.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def progress_bar(label: str = "{task.description}") -> Progress:
    """The one progress bar style of the CLI: label, bar, done/total, elapsed, on stderr."""
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )


def friendly(fn: F) -> F:
    """Turn ragloop errors into one clear line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        logging.getLogger("faiss").setLevel(logging.WARNING)
        try:
            return fn(*args, **kwargs)
        except RagloopError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def _register_commands() -> None:
    import importlib

    for module in ("retrieval", "eval", "graph", "chat", "experiment"):
        try:
            importlib.import_module(f"ragloop.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"ragloop.cli.{module}":
                raise


_register_commands()
