"""The ``ragloop`` command line: the only place that prints or turns errors into exit codes.

Each command family lives in its own module of this package and registers on ``app``.
Exit codes: 0 done; 1 a runtime error (a model, file or index failed); 2 a usage error (a
flag, setting or name ragloop cannot use); 3 nothing measured (every row or metric failed).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragloop.errors import ConfigError, RagloopError, UnknownNameError
from ragloop.safety.encoding import clean_text, decode_bytes

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NOTHING_MEASURED = 3
#: an argument that reads its text from standard input
STDIN = "-"

app = typer.Typer(
    help="ragloop: a self-correcting RAG pipeline with its evaluation built in.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals may hold an API key
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 runtime error, 2 usage error, 3 nothing measured.",
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


def _version(value: bool) -> None:
    if value:
        from ragloop import __version__

        typer.echo(f"ragloop {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version,
        is_eager=True,
        help="print the version and exit",
    ),
) -> None:
    """ragloop: a self-correcting RAG pipeline with its evaluation built in."""


#: what has already been told about replaced bytes (each input kind said once)
_REPLACED_SAID: set[str] = set()


def user_text(value: str, what: str, replaced: bool = False) -> str:
    """Text a user typed or piped, decoded like a file: invalid bytes become U+FFFD, said once.

    ``replaced``: the caller already replaced some (bytes decoded with ``decode_bytes``).
    """
    text, cleaned = clean_text(value)
    if (replaced or cleaned) and what not in _REPLACED_SAID:
        _REPLACED_SAID.add(what)
        err_console.print(
            f"note: the {what} held bytes that are not UTF-8; they were replaced with U+FFFD",
            markup=False,
            highlight=False,
        )
    return text


def read_stdin_arg(value: str, what: str) -> str:
    """``-`` means: read ``what`` from standard input (``ragloop ask -``).

    Either way the text is decoded as a file is (BOMs, UTF-16, invalid bytes replaced).
    """
    import sys

    if value != STDIN:
        return user_text(value, what)
    if sys.stdin is None or sys.stdin.isatty():
        raise ConfigError(f"'-' reads the {what} from standard input: pipe something into it")
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(raw, str):
        return user_text(raw, what)
    text, replaced = decode_bytes(raw)
    return user_text(text, what, replaced)


TIMEOUT_HELP = (
    "seconds one LLM request may take (RAGLOOP_LLM_TIMEOUT; default 60, 120 for a local server)"
)
MAX_TOKENS_HELP = (
    "most tokens an LLM reply may have (RAGLOOP_LLM_MAX_TOKENS; default 1024, 256 for a local "
    "server)"
)
MAX_RETRIES_HELP = (
    "retries of a failed LLM request (RAGLOOP_LLM_MAX_RETRIES; default 2, 1 for a local server)"
)


def llm_knobs(
    timeout: float | None, max_tokens: int | None, max_retries: int | None
) -> dict[str, Any]:
    """The LLM flags as Settings overrides (None: keep the environment's or the default)."""
    return {"llm_timeout": timeout, "llm_max_tokens": max_tokens, "llm_max_retries": max_retries}


def print_error(message: str) -> None:
    """``error: message`` on stderr: redacted, printed as text, controls neutralised."""
    from ragloop.redact import redact
    from ragloop.safety.console import plain

    err_console.print("[bold red]error:[/] ", end="", highlight=False)
    err_console.print(plain(redact(message)), highlight=False)


#: failures of a path the user chose (missing, not a folder, read-only, not permitted)
_PATH_ERRNOS = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.EROFS}


def friendly(fn: F) -> F:
    """Turn ragloop errors into one clear line on stderr and their exit code (2 usage, 1 other)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        logging.getLogger("faiss").setLevel(logging.WARNING)
        try:
            return fn(*args, **kwargs)
        except RagloopError as exc:
            print_error(str(exc))
            # a value ragloop cannot use (flag, setting, name, dataset) is a usage error
            usage = isinstance(exc, ValueError | UnknownNameError)
            raise typer.Exit(EXIT_USAGE if usage else EXIT_ERROR) from None
        except (typer.Exit, typer.Abort, click.exceptions.Exit, click.ClickException):
            raise
        except Exception as exc:
            if os.environ.get("RAGLOOP_DEBUG"):
                raise
            if isinstance(exc, OSError) and exc.errno in _PATH_ERRNOS and exc.filename:
                # a folder the user named (a setting, --out, --index) that cannot be used
                print_error(
                    f"cannot use {exc.filename}: {exc.strerror}; check that the folder exists "
                    "and is writable, or point RAGLOOP_DATA_DIR / RAGLOOP_INDEX_DIR / --out "
                    "elsewhere"
                )
                raise typer.Exit(EXIT_USAGE) from None
            # an unexpected failure: one redacted line, not a traceback that may hold a key
            print_error(
                f"{type(exc).__name__}: {exc} (unexpected; rerun with RAGLOOP_DEBUG=1 for the "
                "traceback and report it)"
            )
            raise typer.Exit(EXIT_ERROR) from None

    return wrapper  # type: ignore[return-value]


def _register_commands() -> None:
    import importlib

    for module in (
        "retrieval",
        "eval",
        "graph",
        "chat",
        "traces",
        "experiment",
        "serve",
        "testset",
    ):
        try:
            importlib.import_module(f"ragloop.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"ragloop.cli.{module}":
                raise


_register_commands()
