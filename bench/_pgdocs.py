"""The real-corpus benchmark data: Debian's PostgreSQL reference pages and ~380 questions on them.

API (import with bench/ on sys.path, as the bench scripts do: ``from _pgdocs import ...``)::

    corpus_root() -> Path                 # the installed HTML docs; apt-get installs them as root,
                                          # else PgDocsMissing says how to install them
    select_pages(root, n=310) -> list[Path]   # 307 reference pages: sql-*, functions-*, app-*,
                                          # runtime-config-*, then datatype-*, ddl-*, indexes-*
    build_corpus(dest=None, root=None) -> Path  # copies them into dest (default
                                          # .ragloop/bench/pgdocs/corpus); index exactly that folder
    load_questions(root, seed=0, per_kind=None) -> list[Question]
                                          # root: the corpus folder (or the Debian html folder)
    Question(id, kind, question, gold_page, gold_snippets, name, target_kind)
    passage_hit(text, q, source=None) -> bool  # the text holds the defining passage; pass the
                                          # chunk's source too, so only the gold page counts
    page_hit(source, q) -> bool           # a chunk (path, file name or "page.html#3") is the page
    KINDS = ("named", "paraphrase", "natural")

Kinds: ``named`` asks by name ("What does the SQL command CREATE INDEX do?"); ``paraphrase``
rewords the target's description and never contains its name; ``natural`` are hand-written
"how do I ..." questions (bench/data/pgdocs_natural.jsonl). ``name`` is what a good answer
names ("CREATE INDEX"; empty for natural questions); ``target_kind`` is command, program,
function, setting or natural. Gold is the passage: each question carries one or two verbatim
snippets (30-80 characters) of the defining passage (a command's first Description sentence,
a function's description cell, a setting's description paragraph) that no other selected page
holds, exactly or nearly. ``per_kind`` caps each kind (an int, or a dict by kind); the default
keeps 150 named, 150 paraphrase and every natural question. Sampling is deterministic for a
seed and round-robins over target types and pages, so no page gives more than a few
questions of a kind. Building the questions takes about 2 s of CPU.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _pgdocs_gold import FUZZY_LEN, FUZZY_MIN, PageIndex, natural_rows, unique_gold
from _pgdocs_parse import Target, page_name, parse, read_page, squash
from _pgdocs_phrase import named, paraphrase
from filelock import FileLock
from rapidfuzz import fuzz

KINDS = ("named", "paraphrase", "natural")
DEBIAN_PACKAGE = "postgresql-doc-15"
GROUPS = ("sql-", "functions-", "app-", "runtime-config-", "datatype-", "ddl-", "indexes-")
CONTENTS_PAGES = {"sql-commands.html"}  # a list of every command's purpose line: navigation only
HERE = Path(__file__).resolve().parent
NATURAL_PATH = HERE / "data" / "pgdocs_natural.jsonl"
#: every passage judged to answer a natural question, not only the one labelled gold: the top 5
#: of dense, sparse and hybrid for each question were pooled and each passage read and judged
#: (TREC-style pooling); a snippet of the answering sentence stands for each
ANSWERS_PATH = HERE / "data" / "pgdocs_natural_answers.jsonl"
DEFAULT_DEST = HERE.parent / ".ragloop" / "bench" / "pgdocs" / "corpus"
DEFAULT_PER_KIND = {"named": 150, "paraphrase": 150, "natural": None}
MARKER = ".ragloop-bench-corpus"


class PgDocsMissing(RuntimeError):
    """The PostgreSQL HTML documentation is not installed."""


@dataclass(frozen=True)
class Question:
    """One bench question with its gold page and gold passage snippets."""

    id: str
    kind: str  # one of KINDS
    question: str
    gold_page: str  # file name in the corpus folder, e.g. "sql-createindex.html"
    gold_snippets: tuple[str, ...]
    name: str = ""  # what the answer should name ("CREATE INDEX"); "" for natural questions
    target_kind: str = ""  # command | program | function | setting | natural
    #: natural questions: (page, snippet) of every passage judged to answer (ANSWERS_PATH)
    answers: tuple[tuple[str, str], ...] = ()


def _installed() -> Path | None:
    found = sorted(Path("/usr/share/doc").glob("postgresql-doc-*/html"), reverse=True)
    preferred = [p for p in found if p.parent.name == DEBIAN_PACKAGE]
    return (preferred or found or [None])[0]


def corpus_root() -> Path:
    """The Debian PostgreSQL HTML docs; installs the package when root with apt-get, else raises."""
    return debian_docs(_installed, DEBIAN_PACKAGE, PgDocsMissing, "PostgreSQL docs")


def debian_docs(
    find: Callable[[], Path | None], package: str, missing: type[Exception], what: str
) -> Path:
    """``find()``'s folder; when absent, ``apt-get install package`` (as root), else raise."""
    root = find()
    if root is None and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {package} with apt-get ...", file=sys.stderr)
        cmd = ["apt-get", "install", "-y", "-qq", package]
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        root = find()
    if root is None:
        raise missing(f"{what} not found: install them with `sudo apt-get install {package}`")
    return root


def select_pages(root: Path, n: int = 310) -> list[Path]:
    """The reference pages under root (plain or .html.gz), group by group, at most n."""
    pages: list[Path] = []
    for group in GROUPS:
        found = {page_name(p): p for p in root.glob(f"{group}*.html*")}
        pages += [
            found[k] for k in sorted(found) if k.endswith(".html") and k not in CONTENTS_PAGES
        ]
    return pages[:n]


def _place(src: Path, target: Path) -> None:
    """Hardlink (or copy, decompressing .gz) src to target atomically."""
    if target.exists() and src.suffix == ".html" and target.stat().st_size == src.stat().st_size:
        return
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        if src.suffix == ".gz":
            raise OSError("compressed pages are copied")
        os.link(src, tmp)
    except OSError:
        with open(tmp, "wb") as fh:
            fh.write(read_page(src))
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, target)


def build_corpus(dest: Path | None = None, root: Path | None = None) -> Path:
    """Copy (hardlink where possible) the selected pages into dest, a folder this module owns.

    A folder that holds files without this module's marker is refused, never overwritten;
    a lock keeps two benches building the same folder at once from racing.
    """
    pages = select_pages(root or corpus_root())
    if not pages:
        raise PgDocsMissing(f"no PostgreSQL reference pages under {root}: pass the html folder")
    return place_pages(pages, Path(dest or DEFAULT_DEST), "bench/_pgdocs.py")


def place_pages(pages: list[Path], dest: Path, writer: str) -> Path:
    """Copy (hardlink where possible) pages into dest, a folder the bench owns (its marker)."""
    if dest.exists() and any(dest.iterdir()) and not (dest / MARKER).exists():
        raise FileExistsError(f"{dest} holds files this bench did not write: pass another dest")
    dest.mkdir(parents=True, exist_ok=True)
    with FileLock(dest / ".ragloop-bench.lock"):
        (dest / MARKER).write_text(f"written by {writer}\n", encoding="utf-8")
        wanted = {page_name(p): p for p in pages}
        for stale in dest.glob("*.html"):
            if stale.name not in wanted:
                stale.unlink()
        for name, src in wanted.items():
            _place(src, dest / name)
    return dest


def _balanced(cands: list[Question], cap: int | None, rng: random.Random) -> list[Question]:
    """Up to cap questions, round-robin over target types, then over pages within a type."""
    if cap is None or cap >= len(cands):
        return list(cands)
    streams = []
    by_type: dict[str, dict[str, list[Question]]] = defaultdict(lambda: defaultdict(list))
    for q in cands:
        by_type[q.target_kind][q.gold_page].append(q)
    for tkind in sorted(by_type):
        pages = [rng.sample(qs, len(qs)) for _, qs in sorted(by_type[tkind].items())]
        rng.shuffle(pages)
        depth = max(len(p) for p in pages)
        streams.append([p[i] for i in range(depth) for p in pages if i < len(p)])
    out: list[Question] = []
    while len(out) < cap and any(streams):
        for stream in streams:
            if stream and len(out) < cap:
                out.append(stream.pop(0))
    return out


def load_questions(
    root: Path,
    seed: int = 0,
    per_kind: int | dict[str, int | None] | None = None,
    natural_path: Path = NATURAL_PATH,
) -> list[Question]:
    """Questions of every kind on the pages under root, deterministic for a seed."""
    keys: dict[str, str] = {}
    targets: list[Target] = []
    for path in select_pages(Path(root)):
        text, found = parse(path)
        keys[page_name(path)] = squash(text)
        targets += found
    if not targets:
        raise PgDocsMissing(f"no PostgreSQL reference pages under {root}: run build_corpus()")
    caps = dict(DEFAULT_PER_KIND)
    if isinstance(per_kind, int):
        caps = dict.fromkeys(KINDS, per_kind)
    elif isinstance(per_kind, dict):
        caps.update(per_kind)
    rng = random.Random(seed)
    shared: dict[str, int] = defaultdict(int)
    pages_of: dict[str, set[str]] = defaultdict(set)
    for t in targets:
        shared[t.purpose.casefold()] += 1
        pages_of[t.name.casefold()].add(t.page)
    cands: dict[str, list[Question]] = {k: [] for k in KINDS}
    index = PageIndex(keys)
    for t, gold in unique_gold(targets, index):
        qid = f"{t.page.removesuffix('.html')}/{t.name}"
        if len(pages_of[t.name.casefold()]) == 1:  # "length" lives on several pages: skip it
            q = Question(f"named/{qid}", "named", named(t, rng), t.page, gold, t.name, t.kind)
            cands["named"].append(q)
        text = paraphrase(t, rng) if shared[t.purpose.casefold()] == 1 else None
        if text:
            q = Question(f"paraphrase/{qid}", "paraphrase", text, t.page, gold, t.name, t.kind)
            cands["paraphrase"].append(q)
    if natural_path.exists():
        cands["natural"] = natural_questions(natural_path, index, load_answers(ANSWERS_PATH))
    out: list[Question] = []
    for kind in KINDS:
        out += _balanced(cands[kind], caps.get(kind), random.Random(f"{seed}/{kind}"))
    return out


def natural_questions(
    path: Path, index: PageIndex, answers: dict[str, tuple[tuple[str, str], ...]] | None = None
) -> list[Question]:
    """The hand-written questions of a JSON-lines file (bad rows reported and skipped), with
    the passages judged to answer each when ``answers`` has them."""
    return [
        Question(
            f"natural/{n}",
            "natural",
            row["question"],
            row["gold_page"],
            tuple(row["gold_snippets"]),
            "",
            "natural",
            (answers or {}).get(row["question"], ()),
        )
        for n, row in natural_rows(path, index)
    ]


def passage_hit(text: str, q: Question, source: str | None = None) -> bool:
    """True when text holds a gold snippet (normalised containment, else partial_ratio >= 90).

    Both sides are compared markup-free, casefolded and without whitespace, so a chunker's line
    breaks or a parser's spacing between table cells do not matter. With a source, the chunk
    must also come from the gold page.
    """
    if source is not None and not page_hit(source, q):
        return False
    key = squash(text)
    golds = [squash(s) for s in q.gold_snippets]
    if any(g in key for g in golds):
        return True
    return any(fuzz.partial_ratio(g, key) >= FUZZY_MIN for g in golds if len(g) >= FUZZY_LEN)


def load_answers(path: Path) -> dict[str, tuple[tuple[str, str], ...]]:
    """Question -> (page, snippet) of each passage judged to answer it; bad rows are skipped."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    if not path.exists():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
            out[row["question"]] = tuple((a["page"], a["snippet"]) for a in row["answers"])
        except (ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"{path.name}:{n}: skipped ({type(exc).__name__}: {exc})", stacklevel=2)
    return out


def answer_hit(text: str, q: Question, source: str | None = None) -> bool:
    """True when text is a passage judged to answer q (its snippet, on its page), or gold."""
    if passage_hit(text, q, source):
        return True
    key = squash(text)
    return any(
        (source is None or on_page(source, page)) and squash(snippet) in key
        for page, snippet in q.answers
    )


def on_page(source: str, page: str) -> bool:
    """True when a chunk's source (a path, file name or chunk id) names ``page``."""
    name = Path(str(source).split("#", 1)[0]).name
    return name == page or name == page + ".gz"


def page_hit(source: str, q: Question) -> bool:
    """True when a chunk's source (a path, file name or chunk id) names the gold page."""
    return on_page(source, q.gold_page)
