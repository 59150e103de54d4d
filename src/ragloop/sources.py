"""Which corpus and index a pipeline answers from: chosen explicitly, never by silent fallback.

No index and no corpus named is an error naming ``ragloop index PATH``; the bundled demo
base is used only when asked for (``demo=True``, ``--demo``, ``make demo``); an index folder
named by ``--index``/``RAGLOOP_INDEX_DIR`` that does not exist is never created out of thin
air; and an index of another corpus or chunking is replaced only with ``force``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragloop.config import Settings
from ragloop.data import KB_DIR
from ragloop.errors import ConfigError, IndexError_
from ragloop.retrievers.index import read_manifest
from ragloop.safety.owned import check_replaceable


def no_index_error(index_dir: Path) -> IndexError_:
    """The error for "there is no index yet": how to build one from your documents."""
    return IndexError_(
        f"no index at {index_dir}: build one from your documents with `ragloop index PATH` "
        f"(add --out {index_dir} if that is not the default), or pass --corpus PATH; "
        "`ragloop index --demo` (or `make demo`) builds the bundled demo base"
    )


def indexed_corpus(index_dir: Path) -> Path | None:
    """The corpus an existing index was built from (even when that folder is gone now)."""
    if not (Path(index_dir) / "manifest.json").is_file():
        return None
    folder = read_manifest(index_dir).get("corpus_dir")
    return Path(folder) if folder else None


def check_index_dir(settings: Settings) -> Path:
    """The index folder, refused when it is a file, a user's folder, or a path that is wrong."""
    folder = Path(settings.index_dir)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"index folder {folder} is a file: pass a folder with --index")
    explicit = "index_dir" in settings.model_fields_set
    if not folder.exists() and explicit and not folder.parent.is_dir():
        raise ConfigError(
            f"index folder {folder} does not exist and neither does {folder.parent}: check "
            "--index / RAGLOOP_INDEX_DIR, or build one there with `ragloop index PATH --out "
            f"{folder}`"
        )
    check_replaceable(folder, "index", "--index")
    return folder


def choose_corpus(
    settings: Settings, corpus_dir: str | Path | None = None, *, demo: bool = False
) -> Path:
    """The corpus to answer from: ``--corpus``, the setting, the index's own, or the demo."""
    folder = check_index_dir(settings)
    explicit = corpus_dir or settings.corpus_dir
    if demo:
        if explicit and Path(explicit).resolve() != KB_DIR.resolve():
            raise ConfigError("--demo answers from the bundled demo base: drop --corpus")
        return KB_DIR
    if explicit:
        path = Path(explicit)
        if not path.is_dir():
            raise ConfigError(f"corpus folder not found: {path} (pass an existing folder)")
        return path
    built_from = indexed_corpus(folder)
    if built_from is None:
        raise no_index_error(folder)
    return built_from


def describe_web(web: Any) -> str:
    """A short name of the web source in use."""
    if web is None:
        return "off"
    name = getattr(web, "name", "") or type(web).__name__
    if "tavily" in str(name).lower():
        return "Tavily web search"
    folder = getattr(web, "folder", None)
    return f"offline web corpus {folder}" if folder else "offline web corpus"


def describe(corpus: Path, index_dir: Path, index: Any, web: Any) -> dict[str, str]:
    """What a pipeline answers from: corpus, index folder and size, web source."""
    demo = " (bundled demo base)" if Path(corpus).resolve() == KB_DIR.resolve() else ""
    chunks = len(getattr(index, "chunks", []) or [])
    return {
        "corpus": f"{corpus}{demo}",
        "index": f"{index_dir} ({chunks} chunks)",
        "web": describe_web(web),
    }
