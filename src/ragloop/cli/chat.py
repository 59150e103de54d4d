"""``ragloop chat``: a terminal chat with memory over the graph."""

from __future__ import annotations

import concurrent.futures
import contextlib
import sys
from pathlib import Path
from typing import Any

import typer

from ragloop.cli import app, console, err_console, friendly, user_text
from ragloop.cli.flags import LLM_FLAGS, RUN_FLAGS, setting_flags
from ragloop.cli.graph import show_result
from ragloop.config import load_settings
from ragloop.errors import RagloopError
from ragloop.safety.console import clean, shown

HELP = "/trace  last turn's path and scores · /history · /new [ID]  new thread · quit (exit, :q)"
#: what leaves the chat, typed alone, with or without a leading slash
QUIT_WORDS = frozenset({"quit", "exit", "q", ":q", ":quit", ":exit", ":wq", "bye"})


def is_quit(text: str) -> bool:
    """Whether a line means "leave": quit, exit, :q (also /quit, /exit, /q, /:q), any case."""
    word = text.strip().rstrip(".!").lower()
    return word.removeprefix("/") in QUIT_WORDS


def header(session: Any, pipeline: Any, earlier: int) -> str:
    """The first line of a chat: corpus and web source, model, thread and how to resume it."""
    describe = getattr(pipeline, "describe_sources", None)
    sources = describe() if callable(describe) else "sources: unknown"
    state = f"resumed, {earlier} earlier turn(s)" if earlier else "new"
    return (
        f"{sources} · model {pipeline.model}\n"
        f"thread {session.thread_id} ({state}) · resume with --thread {session.thread_id}"
    )


def _wait(future: concurrent.futures.Future[Any]) -> Any:
    """Wait for a turn in short slices so Ctrl-C reaches the main thread at once."""
    while True:
        try:
            return future.result(timeout=0.2)
        except concurrent.futures.TimeoutError:
            continue


def _show_answer(result: Any) -> None:
    console.print(f"[bold]A:[/] {shown(result.answer)}", highlight=False)
    for cite in result.citations:
        origin = " (web)" if cite.get("origin") == "web" else ""
        console.print(
            clean(f"   [{cite['n']}] {cite['id']} — {cite.get('title', '')}{origin}"),
            highlight=False,
            markup=False,
        )
    path = " → ".join(str(s.get("node")) for s in result.steps)
    console.print(
        f"[dim]{shown(path)} · stop: {result.stop_reason} · /trace for details[/]", highlight=False
    )


def _run_turn(session: Any, text: str) -> None:
    """One turn with a live status of the current step; Ctrl-C cancels only this turn."""
    with err_console.status("thinking…") as status:

        def on_step(node: str, detail: str) -> None:
            status.update(shown(f"{node}: {detail[:90]}"))

        future = session.submit(session.aturn(text, on_step))
        try:
            result = _wait(future)
        except KeyboardInterrupt:
            session.cancel(future)
            err_console.print("[yellow]turn cancelled[/] (the conversation is unchanged)")
            return
        except Exception as exc:  # noqa: BLE001 - one failed turn (network, model) keeps the chat
            from ragloop.redact import redact

            what = str(exc) if isinstance(exc, RagloopError) else f"{type(exc).__name__}: {exc}"
            err_console.print(f"[bold red]error:[/] {shown(redact(what))}", highlight=False)
            return
    if result.question != text.strip():
        console.print(f"[dim](as: {shown(result.question)})[/]", highlight=False)
    _show_answer(result)


def _command(session: Any, text: str) -> bool:
    """Handle a /command; False means leave the chat."""
    name, _, arg = text.partition(" ")
    name = name.lower()
    if is_quit(name):
        return False
    if name == "/new":
        console.print(f"new thread [bold]{session.new_thread(arg.strip() or None)}[/]")
    elif name == "/trace":
        result = session.call(session.alast_result())
        if result is None:
            console.print("no finished turn in this thread yet")
        else:
            show_result(result)
    elif name == "/history":  # what the user typed, and the question it was read as
        for n, turn in enumerate(session.history(), start=1):
            typed = turn.original or turn.question
            read_as = f"  (read as: {shown(turn.question)})" if turn.question != typed else ""
            console.print(f"{n}. {shown(typed)}{read_as}", highlight=False)
    else:
        console.print(HELP, markup=False)
    return True


def chat_loop(session: Any) -> None:
    """Read lines until quit/exit/:q or end of input; an empty line is ignored.

    Bytes that are not UTF-8 reach the loop as surrogate escapes (not a crash) and are
    replaced with U+FFFD there, as in a file.
    """
    with contextlib.suppress(AttributeError, ValueError):  # a test's stdin may not reconfigure
        sys.stdin.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]
    while True:
        try:
            line = console.input("[bold cyan]you>[/] ")
        except EOFError:
            console.print()
            return
        except KeyboardInterrupt:
            console.print("\n(quit or Ctrl-D to leave)")
            continue
        text = user_text(line, "chat input").strip()
        if not text:
            continue
        if is_quit(text):
            return
        if text.startswith("/"):
            if not _command(session, text):
                return
            continue
        _run_turn(session, text)


@app.command()
@friendly
@setting_flags("llm", "corpus_dir", "index_dir", *RUN_FLAGS, *LLM_FLAGS)
def chat(
    thread: str = typer.Option(None, "--thread", help="resume this conversation (default: new)"),
    traces: Path = typer.Option(None, "--traces", help="trace store (default: data folder)"),
    *,
    flags: dict[str, Any],
) -> None:
    """Chat with memory across turns; every turn is recorded in the trace store."""
    from ragloop.chat.session import ChatSession
    from ragloop.pipeline import build_pipeline

    settings = load_settings(**flags)
    with err_console.status("building the pipeline…"):
        pipeline = build_pipeline(settings)
    url = settings.database_url  # memory, thread locks and (without --traces) traces in Postgres
    from ragloop.chat.stores import trace_store

    store = trace_store(settings, traces)
    db = Path(settings.data_dir) / "chat.sqlite"
    with ChatSession(pipeline, db, thread_id=thread, traces=store, database_url=url) as session:
        console.print(
            header(session, pipeline, len(session.history())), highlight=False, markup=False
        )
        console.print(HELP, markup=False, style="dim")
        chat_loop(session)
