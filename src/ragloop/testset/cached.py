"""``dataset = "testset:N"`` in an experiment spec: a set generated from its corpus, cached."""

from __future__ import annotations

from pathlib import Path

from ragloop.errors import ConfigError
from ragloop.retrievers.corpus import fingerprint
from ragloop.testset import generate, write_rows

PREFIX = "testset:"
#: bump when the generator changes what it writes, so cached sets are made again
GENERATOR_VERSION = 4


def is_testset(value: object) -> bool:
    """Whether a spec's dataset value asks for a generated set."""
    return isinstance(value, str) and value.startswith(PREFIX)


def parse_size(value: str) -> int:
    """N of ``testset:N``; anything but a whole number >= 1 is an error saying how to fix it."""
    raw = value[len(PREFIX) :].strip()
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"dataset {value!r}: write testset:N with N a whole number >= 1")
    return int(raw)


def cached_testset(
    value: str, corpus: Path, cache_dir: Path, seed: int, chunking: dict[str, object]
) -> Path:
    """The generated set's file under ``cache_dir/testsets`` (made on first use, offline).

    The name holds the corpus fingerprint, N, the seed and the generator version, so a
    changed corpus gets a new set and the same spec reuses the same questions. ``chunking``
    is the spec's ``[settings]`` (its chunk_size/chunk_overlap), so the reference ids are
    the chunk ids the experiment's index will have.
    """
    from filelock import FileLock

    size = parse_size(value)
    chunk_size = chunking.get("chunk_size")
    overlap = chunking.get("chunk_overlap")
    chunk_size = chunk_size if isinstance(chunk_size, int) else None
    overlap = overlap if isinstance(overlap, int) else None
    folder = cache_dir / "testsets"
    folder.mkdir(parents=True, exist_ok=True)
    chunks = f"c{chunk_size or 'd'}-{'d' if overlap is None else overlap}"
    name = f"{fingerprint(corpus)}-n{size}-s{seed}-{chunks}-v{GENERATOR_VERSION}.jsonl"
    path = folder / name
    with FileLock(str(folder / ".lock")):
        if not path.is_file():
            ts = generate(corpus, size, seed=seed, chunk_size=chunk_size, chunk_overlap=overlap)
            if not ts.rows:
                raise ConfigError(f"corpus {corpus} gave no questions: {'; '.join(ts.notes)}")
            write_rows(ts.rows, path)
    return path
