"""A second real corpus for the loop bench: the Python library reference from Debian.

Debian's ``python3.11-doc`` installs the Sphinx-built HTML of the standard library (316 pages
under ``/usr/share/doc/python3.11/html/library``, about 11,000 chunks). Questions are built
from the pages' object entries (``<dl class="py function">`` and its kin: functions, methods,
classes, exceptions, attributes, data), with the entry's first sentence as gold:

- ``named`` asks by the qualified name: "What does os.setresgid do?", "What is
  socket.has_ipv6 for?";
- ``description`` asks for a function or method by its first sentence, its verb conjugated
  ("Return the number of CPUs ..." -> "Which function returns the number of CPUs ...?"). It is
  not reworded, so it favours BM25: a check that the loop keeps what sparse finds;
- ``natural`` are 90 hand-written "how do I ..." questions that name no function or module
  ("How can I find out how many processor cores my computer has?"), in
  ``bench/data/pydocs_natural.jsonl``, each with the gold page and verbatim snippets of the
  entry that answers. They were written from the pages alone, before any retriever was run
  on them (blind to what retrieval finds).

A gold sentence must occur on exactly one page (a hand-written row whose snippet does not is
reported and skipped). Sampling is deterministic for a seed.

API: ``corpus_root()``, ``build_corpus(dest=None, root=None)``, ``load_questions(root, seed=0,
per_kind=150, natural_path=NATURAL_PATH)``; questions are ``_pgdocs.Question`` and are scored
with ``_pgdocs.passage_hit``.
"""

from __future__ import annotations

import random
from pathlib import Path

import lxml.html
from _pgdocs import Question, debian_docs, natural_questions, place_pages
from _pgdocs_gold import PageIndex
from _pgdocs_parse import clean, first_sentence, squash

DEBIAN_PACKAGE = "python3.11-doc"
HERE = Path(__file__).resolve().parent
DEFAULT_DEST = HERE.parent / ".ragloop" / "bench" / "pydocs" / "corpus"
KINDS = ("named", "description", "natural")
NATURAL_PATH = HERE / "data" / "pydocs_natural.jsonl"
OBJECTS = ("function", "method", "class", "exception", "attribute", "data")
CONTENTS_PAGES = {"index.html"}  # the library's table of contents: navigation only
#: imperative first words of a description and their third person ("Return" -> "returns")
_IMPERATIVES = (
    "return set get create remove change open close convert write read raise compute test "
    "delete make add start stop send encode decode split join register format parse print "
    "load wait run call apply search find"
)
VERBS = {
    w: w + ("es" if w.endswith(("s", "sh", "ch", "x")) else "s")
    for w in _IMPERATIVES.split()  # noqa: SIM905
}
VERBS["copy"] = "copies"


class PyDocsMissing(RuntimeError):
    """The Python library HTML documentation is not installed."""


def _installed() -> Path | None:
    found = sorted(Path("/usr/share/doc").glob("python3*/html/library"), reverse=True)
    preferred = [p for p in found if p.parts[-3] == "python3.11"]
    return (preferred or found or [None])[0]


def corpus_root() -> Path:
    """The Debian Python library docs; installs the package when root with apt-get, else raises."""
    return debian_docs(_installed, DEBIAN_PACKAGE, PyDocsMissing, "Python docs")


def select_pages(root: Path) -> list[Path]:
    return [p for p in sorted(Path(root).glob("*.html")) if p.name not in CONTENTS_PAGES]


def build_corpus(dest: Path | None = None, root: Path | None = None) -> Path:
    """Copy the library pages into dest (default ``.ragloop/bench/pydocs/corpus``)."""
    pages = select_pages(root or corpus_root())
    if not pages:
        raise PyDocsMissing(f"no library pages under {root}: pass the html/library folder")
    return place_pages(pages, Path(dest or DEFAULT_DEST), "bench/_pydocs.py")


def entries(path: Path) -> list[tuple[str, str, str]]:
    """(qualified name, object type, first sentence) of each described object on a page."""
    tree = lxml.html.parse(str(path)).getroot()
    out = []
    for dl in tree.xpath("//dl[contains(concat(' ', normalize-space(@class), ' '), ' py ')]"):
        kind = next((c for c in (dl.get("class") or "").split() if c in OBJECTS), None)
        dt, dd = dl.find("dt"), dl.find("dd")
        if kind is None or dt is None or dd is None or not dt.get("id"):
            continue
        para = dd.find("p")
        if para is None:
            continue
        first = first_sentence(clean(para.text_content()))
        if 25 <= len(first) <= 200:
            out.append((dt.get("id"), kind, first))
    return out


def asked_part(text: str) -> str:
    """A sentence's words as a question ends them: without its closing full stop, nor the
    colon of a sentence that introduces an example ("... the date and time:")."""
    return text.rstrip(".:;, ")


def described(name: str, kind: str, first: str) -> str | None:
    """The description question, or None when the sentence does not start with a known verb or
    names the object itself."""
    words = first.split(None, 1)
    if kind not in ("function", "method") or len(words) < 2 or words[0].lower() not in VERBS:
        return None
    if name.rsplit(".", 1)[-1].casefold() in first.casefold():
        return None
    return f"Which {kind} {VERBS[words[0].lower()]} {asked_part(words[1])}?"


def load_questions(
    root: Path, seed: int = 0, per_kind: int = 150, natural_path: Path = NATURAL_PATH
) -> list[Question]:
    """Up to ``per_kind`` questions of each kind on the pages under root."""
    pages = select_pages(Path(root))
    keys = {p.name: squash(lxml.html.parse(str(p)).getroot().text_content()) for p in pages}
    cands = [(p.name, *e) for p in pages for e in entries(p)]
    rng = random.Random(seed)
    rng.shuffle(cands)
    out: dict[str, list[Question]] = {k: [] for k in KINDS}
    for page, name, kind, first in cands:
        if len(out["named"]) >= per_kind and len(out["description"]) >= per_kind:
            break
        key = squash(first)
        if sum(key in text for text in keys.values()) != 1:  # gold on one page only
            continue
        gold = (first[:120],)
        if len(out["named"]) < per_kind:
            text = (
                f"What does {name} do?"
                if kind in ("function", "method")
                else (f"What is {name} for?")
            )
            out["named"].append(Question(f"named/{name}", "named", text, page, gold, name, kind))
        text = described(name, kind, first)
        if text and len(out["description"]) < per_kind:
            q = Question(f"description/{name}", "description", text, page, gold, name, kind)
            out["description"].append(q)
    if natural_path.exists():
        out["natural"] = natural_questions(natural_path, PageIndex(keys))[:per_kind]
    return [q for k in KINDS for q in out[k]]
