"""What an index folder's manifest says, and the checks made on it before use or replacement."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from ragloop.embeddings.identity import mismatch_reasons
from ragloop.errors import IndexError_
from ragloop.retrievers.corpus import fingerprint
from ragloop.safety.owned import check_replaceable

FORMAT_VERSION = 5  # 2: Markdown split at headings; 3: dense vectors carry the title;
# 4: chunks come from ragloop.documents (parsed sections with heading paths, fenced code);
# 5: the dense docstore is JSON (before: LangChain's pickle, which is never read any more)


#: the modules whose code decides what a chunk is and what is embedded for it (``text.py``:
#: the chunker keeps an option's line with its paragraph by ``text.option_line``)
_CHUNKING_CODE = ("documents", "text.py", "retrievers/corpus.py", "retrievers/dense.py")


@functools.cache
def chunker_fingerprint() -> str:
    """A digest of the parsing and chunking code that built an index's chunks.

    Any change to it (a parser, the chunker, what the dense index embeds) makes indexes
    built before it stale, so an upgrade rebuilds them (from cached vectors where the text
    is unchanged) instead of silently serving old chunks; no version number to forget.
    """
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for part in _CHUNKING_CODE:
        path = root / part
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(root).as_posix().encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of an index folder, or an error saying how to build one."""
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        raise IndexError_(
            f"no index at {folder}: build one with `ragloop index PATH --out {folder}` "
            "(PATH: your documents folder; `--demo` indexes the bundled demo base)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexError_(
            f"the index at {folder} is unreadable ({exc}): rebuild it with "
            f"`ragloop index PATH --out {folder} --force`"
        ) from None
    if not isinstance(data, dict):
        raise IndexError_(f"{path} is not an index manifest: rebuild it with `ragloop index`")
    return data


def stale_reasons(
    manifest: dict[str, Any],
    embeddings_spec: str,
    corpus_dir: str | Path | None = None,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    embeddings: Embeddings | None = None,
) -> list[str]:
    """Why an index cannot be used as it is (empty when it can)."""
    reasons = []
    if manifest.get("format") != FORMAT_VERSION:
        old = isinstance(manifest.get("format"), int) and manifest["format"] < 5
        reasons.append(
            f"index format {manifest.get('format')} is not {FORMAT_VERSION}"
            + (" (an older ragloop's index, with a pickle that is never read)" if old else "")
        )
    elif manifest.get("chunker") != chunker_fingerprint():
        reasons.append("its chunks were made by another version of ragloop's parsers")
    reasons += mismatch_reasons(manifest, embeddings_spec, embeddings)
    for key, want in (("chunk_size", chunk_size), ("chunk_overlap", chunk_overlap)):
        if want is not None and manifest.get(key) != want:
            reasons.append(f"built with {key}={manifest.get(key)}, asked for {want}")
    if corpus_dir is not None and Path(corpus_dir).is_dir():
        now = fingerprint(corpus_dir)
        if now != manifest.get("corpus_fingerprint"):
            reasons.append("the corpus changed since the index was built")
    return reasons


def replaced_by(
    manifest: dict[str, Any],
    corpus_dir: str | Path,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    id_prefix: str | None = None,
) -> list[str]:
    """What a rebuild for these inputs would throw away: another corpus or other chunking."""
    out = []
    built = manifest.get("corpus_dir")
    if built and Path(built).resolve() != Path(corpus_dir).resolve():
        out.append(f"from another corpus ({built})")
    for key, want in (
        ("chunk_size", chunk_size),
        ("chunk_overlap", chunk_overlap),
        ("id_prefix", id_prefix),
    ):
        if want is not None and key in manifest and manifest.get(key) != want:
            out.append(f"with {key}={manifest.get(key)!r} (now {want!r})")
    return out


def check_replace(
    folder: str | Path,
    corpus_dir: str | Path,
    *,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    id_prefix: str | None = None,
    force: bool = False,
) -> list[str]:
    """Raise unless ``folder`` may take a new index of ``corpus_dir``; return what it replaces.

    A folder that is not a ragloop index is never replaced; one built from another corpus or
    with other chunk settings only with ``force``.
    """
    folder = Path(folder)
    check_replaceable(folder, "index")
    if not (folder / "manifest.json").is_file():
        return []
    what = replaced_by(read_manifest(folder), corpus_dir, chunk_size, chunk_overlap, id_prefix)
    if what and not force:
        raise IndexError_(
            f"the index at {folder} was built {'; '.join(what)}: nothing was changed. Replace "
            f"it with `ragloop index {corpus_dir} --out {folder} --force`, or pick another "
            "index folder (`ragloop index --out`, or RAGLOOP_INDEX_DIR)"
        )
    return what


def refuse_other_embeddings(
    folder: Path, manifest: dict[str, Any], embeddings_spec: str, embeddings: Embeddings
) -> None:
    """Raise when the index at ``folder`` was built by other embeddings than these."""
    reasons = mismatch_reasons(manifest, embeddings_spec, embeddings)
    if reasons:
        built = manifest.get("embeddings", "?")
        rebuild = (
            f"`ragloop index {manifest.get('corpus_dir', 'PATH')} --out {folder} "
            f"--embeddings {embeddings_spec} --force`"
        )
        if built == embeddings_spec:  # same setting, other vectors: the model itself changed
            raise IndexError_(
                f"index at {folder} was {'; '.join(reasons)}: the '{built}' model changed "
                f"since the index was built, so its vectors cannot be compared. Rebuild it "
                f"with {rebuild} (vectors already cached for the new model are reused)"
            )
        raise IndexError_(
            f"index at {folder} was {'; '.join(reasons)}. Query it with the embeddings it was "
            f"built with (set RAGLOOP_EMBEDDINGS={built}), or rebuild it with {rebuild}"
        )
