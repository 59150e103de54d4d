"""``ragloop index`` and ``ragloop retrieve``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ragloop.cli import app, console, friendly, progress_bar, read_stdin_arg
from ragloop.cli.flags import setting_flags
from ragloop.config import load_settings
from ragloop.safety.console import plain


@app.command()
@friendly
@setting_flags("embeddings")
def index(
    path: Path = typer.Argument(None, help="corpus folder: your documents"),
    out: Path = typer.Option(None, "--out", help="index folder (default: RAGLOOP_INDEX_DIR)"),
    demo: bool = typer.Option(False, "--demo", help="index the bundled demo base instead"),
    force: bool = typer.Option(
        False, "--force", help="replace an index built from another corpus or chunking"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the index report as JSON"),
    *,
    flags: dict[str, Any],
) -> None:
    """Chunk and index a folder of documents (dense + sparse), and report how each was read.

    Formats: Markdown (.md .markdown), reStructuredText (.rst .rest), HTML (.html .htm
    .xhtml: Sphinx, DocBook, asciidoc, texinfo, mdBook, rustdoc, MkDocs, Docusaurus,
    Javadoc, Doxygen or hand-written), AsciiDoc (.adoc .asciidoc .asc), PDF (.pdf) and
    text (.txt .text; one written in AsciiDoc, reST or Markdown is read as such).
    """
    from ragloop.data import KB_DIR
    from ragloop.embeddings import EmbedPlan, VectorCache, model_id
    from ragloop.errors import ConfigError
    from ragloop.nodes.answer_model import model_for_index
    from ragloop.nodes.lines import choose_profile
    from ragloop.providers import get_embeddings
    from ragloop.retrievers.index import build_index, check_replace
    from ragloop.safety.paths import check_output

    settings = load_settings(**flags)
    if demo == (path is not None):
        raise ConfigError(
            "give the folder to index: `ragloop index PATH` (your documents), or "
            "`ragloop index --demo` for the bundled demo base (not both)"
        )
    corpus = KB_DIR if demo else path
    if not corpus.is_dir():
        raise ConfigError(f"corpus folder not found: {corpus} (pass an existing folder)")
    target = out or settings.index_dir
    check_output(target, [("corpus", corpus)])  # not the corpus, not inside it, not holding it
    replaced = check_replace(  # a user's folder or another corpus's index is never replaced
        target,
        corpus,
        chunk_size=settings.chunk_size,
        chunk_overlap=settings.chunk_overlap,
        id_prefix="",
        force=force,
    )
    started = time.perf_counter()
    emb = get_embeddings(settings.embeddings)
    cache = VectorCache(settings.data_dir / "cache" / "vectors.sqlite")

    said = [0]  # tenths of the work already told when stderr is no terminal (no live bar)

    def plan(p: EmbedPlan) -> None:
        long = p.seconds is not None and p.seconds >= 30  # a large corpus: say so first
        if long or not bar.console.is_terminal:
            bar.console.print(p.describe(), markup=False, highlight=False)

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)
        tenth = done * 10 // total if total else 0
        if not bar.console.is_terminal and tenth > said[0]:  # a log, a pipe, CI: lines
            said[0] = tenth
            bar.console.print(f"embedded {done}/{total} chunks", markup=False, highlight=False)

    with progress_bar("embedding chunks") as bar:
        task = bar.add_task("embed", total=None)
        idx = build_index(
            corpus,
            emb,
            settings.embeddings,
            target,
            chunk_size=settings.chunk_size,
            chunk_overlap=settings.chunk_overlap,
            progress=progress,
            cache=cache,
            on_plan=plan,
        )
    report = idx.report
    assert report is not None
    # the answer's genre profile (which sentence features are on), read from the chunks
    profile, profile_why = choose_profile([c.page_content for c in idx.chunks])
    _, answer_model = model_for_index(target, model_id(emb))  # `ragloop calibrate`'s, if kept
    postgres = None
    if settings.database_url:  # the shared index of server replicas (ragloop.serve.pgindex)
        from ragloop.redact import safe_url
        from ragloop.serve.pgindex import write_index

        pg = write_index(settings.database_url, idx)
        postgres = f"{safe_url(settings.database_url)} ({pg.vector_kind}, version {pg.version()})"
        pg.close()
    if as_json:
        data = {
            "index": str(target),
            "corpus": str(corpus),
            "files": report.files,
            "chunks": len(report.chunks),
            "skipped": [{"file": str(rel), "reason": why} for rel, why in report.skipped],
            "repaired": [{"file": str(rel), "reason": why} for rel, why in report.repaired],
            "replaced": list(replaced),
            "parsing": report.parsing.rows(),
            "boilerplate_dropped": report.boilerplate_dropped,
            "answer_profile": {"name": profile, "why": profile_why},
            "answer_model": answer_model,
            **({"postgres": postgres} if postgres else {}),
            "seconds": round(time.perf_counter() - started, 2),
        }
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    table = Table(title=plain(f"index {target}"), show_header=False)
    table.add_row("corpus", plain(corpus))
    table.add_row("files", str(report.files))
    table.add_row("chunks", str(len(report.chunks)))
    table.add_row("skipped", str(len(report.skipped)))
    table.add_row("answer profile", plain(f"{profile} ({profile_why})"))
    table.add_row("answer model", plain(answer_model))
    table.add_row("seconds", f"{time.perf_counter() - started:.2f}")
    if postgres:
        table.add_row("postgres", plain(postgres))
    console.print(table)
    for what in replaced:
        console.print(plain(f"  replaced the index built {what}"), highlight=False)
    for rel, why in report.skipped:
        console.print(plain(f"  skipped {rel}: {why}"), highlight=False)
    for rel, why in report.repaired:
        console.print(plain(f"  repaired {rel}: {why}"), highlight=False)
    print_parsing(report.parsing.rows(), report.boilerplate_dropped)


def print_parsing(rows: list[dict[str, Any]], dropped: int) -> None:
    """The parsing report: per format and generator, pages, sections, titles, boilerplate."""
    table = Table(title="parsing")
    for col in ("format", "generator", "pages", "sections/page", "titles", "boilerplate"):
        table.add_column(col)
    for row in rows:
        table.add_row(
            plain(row["format"]),
            plain(row["generator"] or "-"),
            str(row["pages"]),
            f"{row['sections_per_page']:.1f}",
            f"{row['titles_found']}/{row['pages']}",
            str(row["boilerplate_blocks"]),
        )
    console.print(table)
    if dropped:
        console.print(f"  {dropped} repeated boilerplate block(s) left out of the index")
    for row in rows:
        if not row["untitled_count"]:
            continue
        more = row["untitled_count"] - len(row["untitled"])
        names = ", ".join(row["untitled"]) + (f" and {more} more" if more > 0 else "")
        console.print(
            plain(f"  no title found in {row['untitled_count']} {row['format']} page(s): {names}")
            + plain(f" ({row['hint']})"),
            highlight=False,
        )


@app.command()
@friendly
@setting_flags("k", "index_dir")
def retrieve(
    question: str = typer.Argument(..., help="the question to retrieve for; - reads stdin"),
    retriever: str = typer.Option(
        None,
        "--retriever",
        "-r",
        help="dense, sparse, hybrid or a registered name (default: the first retriever of "
        "RAGLOOP_RETRIEVERS)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the chunks as JSON"),
    *,
    flags: dict[str, Any],
) -> None:
    """Print the ranked chunks a retriever returns, with score and source."""
    from ragloop.errors import ConfigError
    from ragloop.providers import get_embeddings
    from ragloop.retrievers.index import load_index
    from ragloop.retrievers.registry import get_retriever

    question = read_stdin_arg(question, "question")
    if not question.strip():
        raise ConfigError('the question is empty: pass some text, e.g. ragloop retrieve "..."')
    settings = load_settings(**flags)
    retriever = retriever or settings.retrievers[0]
    idx = load_index(settings.index_dir, get_embeddings(settings.embeddings), settings.embeddings)
    docs = get_retriever(retriever, idx, k=settings.k).invoke(question)
    if as_json:
        chunks = [
            {"rank": n, "id": d.id, "score": d.metadata.get("score"), "text": d.page_content}
            | {"source": d.metadata.get("source"), "title": d.metadata.get("title")}
            for n, d in enumerate(docs, start=1)
        ]
        typer.echo(json.dumps(chunks, ensure_ascii=False, indent=2, default=str))
        return
    if not docs:  # an empty table would look like a failure
        hint = (
            " (BM25 matches words only: try -r hybrid or -r dense)" if retriever == "sparse" else ""
        )
        console.print(plain(f"{retriever}: no chunk matched '{question}'{hint}"))
        return
    table = Table(title=plain(f"{retriever}: {question}"))
    for col in ("#", "score", "source", "text"):
        table.add_column(col)
    for rank, doc in enumerate(docs, start=1):
        snippet = " ".join(doc.page_content.split())[:100]
        table.add_row(
            str(rank), f"{doc.metadata['score']:.4f}", plain(doc.id or ""), plain(snippet)
        )
    console.print(table)
