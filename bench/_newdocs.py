"""More bench corpora of other genres, from Debian doc packages: the SQLite docs (hand-written
HTML), the bash reference manual (one texinfo-built HTML page) and the Rust book (an mdBook
guide: Markdown rendered to HTML, a sidebar of every chapter on every page).

- ``sqlite3-doc``: the top-level pages of ``/usr/share/doc/sqlite3`` (SQL language, pragmas,
  core/aggregate/date/math functions, guides), less the generated cross-reference, change-log
  and requirements pages. Entries: the SQL functions (``<dt><b>abs(X)</b></dt><dd>``, "The
  abs(X) function returns ...") and the pragmas (``PRAGMA auto_vacuum`` then "Query or set
  ...").
- ``bash-doc``: ``bashref.html``, the whole manual on one page (a single-page corpus: every
  gold is on the same page, the passage decides). Entries: every ``<dt id="index-...">``
  with a ``<dd>`` (builtins, variables, options, readline commands).

- ``rust-doc``: the book's chapter and appendix pages (``book/ch*-*.html``,
  ``book/appendix-*.html``; not the first edition's redirect stubs nor the one-page print
  version). A guide has no entry lines to generate questions from: its named and description
  questions are hand-written too (``bench/data/book_entries.jsonl``), as its natural ones.

Questions of three answerable kinds, as bench/_pydocs.py: ``named`` ("What does the SQL
function abs() do?"), ``description`` (the entry's first sentence as a "Which ... ?" question,
its subject dropped: "Which SQL function returns the absolute value of the numeric argument
X?"), ``natural`` (hand-written, blind to retrieval, ``bench/data/<name>_natural.jsonl``).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import warnings
from collections import Counter
from pathlib import Path

import lxml.html
from _pgdocs import Question, debian_docs, natural_questions, place_pages
from _pgdocs_gold import PageIndex, natural_rows
from _pgdocs_parse import clean, first_sentence, squash
from _pydocs import VERBS, asked_part

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".ragloop" / "bench"
KINDS = ("named", "description", "natural")
SQLITE_SKIP = re.compile(
    r"^(changes|chronology|doc_\w+_crossref|requirements|syntaxdiagrams|capi3ref|copyright.*|"
    r"consortium.*|releaselog.*|sitemap|famous|crew|books|codeofconduct|codeofethics|"
    r"download|support|prosupport|docs|doclist|index|news|keyword_index)\.html$"
)
VERBS = {**VERBS, "query": "queries", "expand": "expands", "move": "moves", "kill": "kills",
         "insert": "inserts", "execute": "executes", "display": "displays", "enable": "enables",
         "mark": "marks", "exit": "exits", "resume": "resumes", "save": "saves"}  # fmt: skip
#: more verbs an option's description starts with; for the man pages only, so the other
#: corpora's questions stay the ones their figures were measured on
MAN_VERBS = {**VERBS, "output": "outputs", "print": "prints", "use": "uses", "read": "reads",
             "write": "writes", "remove": "removes", "make": "makes", "ignore": "ignores",
             "interpret": "interprets", "suppress": "suppresses", "show": "shows",
             "follow": "follows", "list": "lists", "sort": "sorts", "append": "appends",
             "change": "changes", "treat": "treats", "search": "searches",
             "preserve": "preserves", "skip": "skips", "stop": "stops", "send": "sends",
             "keep": "keeps", "do": "does"}  # fmt: skip


class DocsMissing(RuntimeError):
    """A Debian documentation package is not installed."""


def sqlite_root() -> Path:
    def find() -> Path | None:
        p = Path("/usr/share/doc/sqlite3")
        return p if (p / "lang_corefunc.html").exists() else None

    return debian_docs(find, "sqlite3-doc", DocsMissing, "SQLite docs")


def bash_root() -> Path:
    def find() -> Path | None:
        for p in (Path("/usr/share/doc/bash-doc"), Path("/usr/share/doc/bash")):
            if (p / "bashref.html").exists():
                return p
        return None

    return debian_docs(find, "bash-doc", DocsMissing, "bash reference manual")


def book_root() -> Path:
    def find() -> Path | None:
        p = Path("/usr/share/doc/rust-doc/html/book")
        return p if (p / "ch01-00-getting-started.html").exists() else None

    return debian_docs(find, "rust-doc", DocsMissing, "the Rust book")


BOOK_PAGE = re.compile(r"^(ch\d\d-\d\d-[\w-]+|appendix-\d\d(-[\w-]+)?)\.html$")


def book_pages(root: Path) -> list[Path]:
    return [p.resolve() for p in sorted(root.glob("*.html")) if BOOK_PAGE.match(p.name)]


def no_entries(path: Path) -> list[tuple[str, str, str, str | None]]:
    """A guide's pages have no entry lines: its named questions are hand-written."""
    return []


def entries_file(name: str) -> Path:
    """The hand-written named and description questions of corpus ``name`` (may not exist)."""
    return HERE / "data" / f"{name}_entries.jsonl"


def entry_pages(name: str) -> set[str]:
    """The gold pages of ``entries_file(name)``'s questions (none when it does not exist)."""
    path = entries_file(name)
    if not path.exists():
        return set()
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.add(str(json.loads(line)["gold_page"]))
        except (ValueError, KeyError, TypeError):
            continue  # reported when the questions are loaded
    return out


def written_entries(name: str, index: PageIndex) -> dict[str, list[Question]]:
    """The hand-written named and description questions, by kind (bad rows reported and
    skipped, as the natural ones are)."""
    out: dict[str, list[Question]] = {"named": [], "description": []}
    path = entries_file(name)
    if not path.exists():
        return out
    for n, row in natural_rows(path, index):
        kind = row.get("kind")
        if kind not in out:
            warnings.warn(f"{path.name}:{n}: skipped (kind {kind!r})", stacklevel=2)
            continue
        qid = f"{kind}/{row['gold_page']}/{n}"
        snippets = tuple(row["gold_snippets"])
        name_of = str(row.get("name", ""))
        question = Question(qid, kind, row["question"], row["gold_page"], snippets, name_of, "item")
        out[kind].append(question)
    return out


def sqlite_pages(root: Path) -> list[Path]:
    return [p.resolve() for p in sorted(root.glob("*.html")) if not SQLITE_SKIP.match(p.name)]


def bash_pages(root: Path) -> list[Path]:
    return [(root / "bashref.html").resolve()]


def _conjugated(sentence: str, verbs: dict[str, str] = VERBS) -> str | None:
    """ "Return the x." -> "returns the x"; None when it does not start with a known verb."""
    words = sentence.split(None, 1)
    if len(words) < 2 or words[0].lower() not in verbs:
        return None
    if words[1].startswith("or "):  # "Query or set ..."
        rest = words[1][3:].split(None, 1)
        if len(rest) == 2 and rest[0].lower() in verbs:
            return f"{verbs[words[0].lower()]} or {verbs[rest[0].lower()]} {asked_part(rest[1])}"
        return None
    return f"{verbs[words[0].lower()]} {asked_part(words[1])}"


def sqlite_entries(path: Path) -> list[tuple[str, str, str, str | None]]:
    """(name, kind, first sentence, description question body) of each entry on a page."""
    tree = lxml.html.parse(str(path)).getroot()
    out: list[tuple[str, str, str, str | None]] = []
    for dt in tree.iter("dt"):
        dd = dt.getnext()
        if dd is None or dd.tag != "dd":
            continue
        sig = clean(dt.text_content())
        m = re.match(r"([a-z_][a-z0-9_]*)\(", sig)
        if not m:
            continue
        first = first_sentence(clean(dd.text_content()))
        lead = re.match(rf"(?:The )?{re.escape(m.group(1))}\([^)]*\)(?: function)?\s+", first, re.I)
        body = asked_part(first[lead.end() :]) if lead else None
        if body and not body.split()[0].endswith("s"):
            body = None
        out.append((f"{m.group(1)}()", "SQL function", first, body))
    for h in tree.xpath("//h[@_id]|//h2|//h3"):
        title = clean(h.text_content())
        if not title.upper().startswith("PRAGMA "):
            continue
        name = title.split()[1].strip(":;")
        if not (h.get("_id") or "").startswith("pragma_"):
            # a section about pragmas in general ("PRAGMA command syntax", "PRAGMA
            # functions"), not one pragma's entry: listed with no sentence, which
            # load_questions skips, so the seeded sample of the real entries stays the one
            # the committed figures were measured on
            out.append((f"PRAGMA {name}", "pragma", "", None))
            continue
        nxt = [p for p in h.itersiblings() if p.tag == "p"][:3]
        sentences = [first_sentence(clean(p.text_content())) for p in nxt]
        # skip the syntax lines ("PRAGMA schema.auto_vacuum;"), not prose ("PRAGMAs that ...")
        first = next((s for s in sentences if not re.match(r"PRAGMA\b", s)), "")
        if first:
            body = _conjugated(first)
            if body and name.casefold() in body.casefold():
                body = None
            out.append((f"PRAGMA {name}", "pragma", first, body))
    return out


def _bash_kind(heading: str) -> str:
    h = heading.casefold()
    return next(
        (k for key, k in (("builtin", "builtin"), ("variable", "shell variable"),
                          ("commands for", "Readline command"), ("option", "shell option"))
         if key in h),
        "item",
    )  # fmt: skip


def bash_entries(path: Path) -> list[tuple[str, str, str, str | None]]:
    """(name, kind, first sentence, description question body) of each indexed entry."""
    tree = lxml.html.parse(str(path)).getroot()
    out: list[tuple[str, str, str, str | None]] = []
    heading = ""
    for el in tree.iter("h2", "h3", "h4", "dt"):
        if el.tag != "dt":
            heading = clean(el.text_content())
            continue
        dd = el.getnext()
        if dd is None or dd.tag != "dd" or not (el.get("id") or "").startswith("index-"):
            continue
        name = clean(el.text_content()).replace("¶", "").strip()
        if not name or len(name) > 40:
            continue
        para = dd.find("p")
        if para is None:
            continue
        first = first_sentence(clean(para.text_content()))
        body = _conjugated(first)
        if body and name.casefold() in body.casefold():
            body = None
        out.append((name, _bash_kind(heading), first, body))
    return out


#: the commands whose man pages make the man-page corpus (section 1, as Debian installs them)
MAN_COMMANDS = (  # noqa: SIM905
    "base64 bzip2 chmod chown cmp comm cp curl cut date df diff du env file find fold grep "
    "gzip head install join kill less ln ls make mkdir mktemp mv nl od paste patch printf ps "
    "readlink realpath rm sed seq sha256sum shuf sort split ssh stat tail tar tee timeout "
    "touch tr uname uniq unzip watch wc wget xargs xz zip"
).split()


def man_root() -> Path:
    """The man pages of ``MAN_COMMANDS`` converted to HTML by mandoc (``mandoc -Thtml``), in
    a folder of the bench's own: a man-page manual as a web server would serve it."""

    def find() -> Path | None:
        return Path("/usr/bin/mandoc") if Path("/usr/bin/mandoc").exists() else None

    mandoc = debian_docs(find, "mandoc", DocsMissing, "mandoc (to convert man pages to HTML)")
    dest = WORK / "man-html"
    dest.mkdir(parents=True, exist_ok=True)
    for cmd in MAN_COMMANDS:
        out = dest / f"{cmd}.html"
        src = next(iter(sorted(Path("/usr/share/man/man1").glob(f"{cmd}.1*"))), None)
        if src is None or out.exists():
            continue
        html = subprocess.run(
            [str(mandoc), "-Thtml", str(src)], capture_output=True, check=True
        ).stdout
        out.write_bytes(html)
    return dest


def man_pages(root: Path) -> list[Path]:
    return [p.resolve() for p in sorted(root.glob("*.html")) if p.stem in MAN_COMMANDS]


def man_entries(path: Path) -> list[tuple[str, str, str, str | None]]:
    """(option, "<command> option", first sentence, description question body) of each
    option of a mandoc page (``<dl class="Bl-tag"><dt>-i, --ignore-case</dt><dd>...``)."""
    tree = lxml.html.parse(str(path)).getroot()
    out: list[tuple[str, str, str, str | None]] = []
    for dt in tree.xpath('//dl[contains(@class, "Bl-tag")]/dt'):
        dd = dt.getnext()
        if dd is None or dd.tag != "dd":
            continue
        flags = [clean(b.text_content()).split()[0] for b in dt.iter("b") if b.text_content()]
        flags = [f.split("=")[0].split("[")[0].rstrip(",") for f in flags if f.startswith("-")]
        if not flags:
            continue
        name = max(flags, key=len)  # the long option when there is one: "--ignore-case"
        first = first_sentence(clean(dd.text_content()))
        body = _conjugated(first, MAN_VERBS)
        out.append((name, f"{path.stem} option", first, body))
    return out


CORPORA = {
    "sqlite": (sqlite_root, sqlite_pages, sqlite_entries),
    "bash": (bash_root, bash_pages, bash_entries),
    "book": (book_root, book_pages, no_entries),
    "man": (man_root, man_pages, man_entries),
}


def build_corpus(name: str) -> Path:
    root_of, pages_of, _ = CORPORA[name]
    dest = WORK / f"{name}docs" / "corpus"
    return place_pages(pages_of(root_of()), dest, "bench/_newdocs.py")


def load_questions(name: str, root: Path, seed: int = 0, per_kind: int = 40) -> list[Question]:
    """Up to ``per_kind`` questions of each kind on the corpus folder ``root``."""
    _, pages_of, entries_of = CORPORA[name]
    pages = sorted(Path(root).glob("*.html"))
    keys = {p.name: squash(lxml.html.parse(str(p)).getroot().text_content()) for p in pages}
    cands = [(p.name, *e) for p in pages for e in entries_of(p)]
    rng = random.Random(seed)
    rng.shuffle(cands)
    out: dict[str, list[Question]] = {k: [] for k in KINDS}

    def named_text(ename: str, kind: str) -> str:
        if kind == "item" or ename.casefold().startswith(kind.casefold()):
            return f"What does {ename} do?"
        return f"What does the {kind} {ename} do?"

    def words(text: str) -> frozenset[str]:
        """A question's words less articles: "returns argument X unchanged" and "returns the
        argument X unchanged" ask the same; "the sine of X" and "the cosine of X" do not."""
        return frozenset(text.casefold().rstrip("?").split()) - {"the", "a", "an"}

    # a question two entries would ask ("What does min() do?" of the aggregate and of the
    # scalar function) has no one gold sentence: neither entry asks it
    asked = Counter(words(named_text(e, k)) for _, e, k, first, _ in cands if first)
    asked.update(words(f"Which {k} {b}?") for _, _, k, first, b in cands if first and b)
    for page, ename, kind, first, body in cands:
        key = squash(first)
        if not 25 <= len(first) <= 220 or sum(t.count(key) for t in keys.values()) != 1:
            continue  # gold on one page and once there
        gold = (first[:120],)
        qid = f"{page}/{ename}"
        text = named_text(ename, kind)
        if len(out["named"]) < per_kind and asked[words(text)] == 1:
            out["named"].append(Question(f"named/{qid}", "named", text, page, gold, ename, kind))
        text = f"Which {kind} {body}?"
        if body and len(out["description"]) < per_kind and asked[words(text)] == 1:
            q = Question(f"description/{qid}", "description", text, page, gold, ename, kind)
            out["description"].append(q)
    index = PageIndex(keys)
    for kind, written in written_entries(name, index).items():
        out[kind] += written[: max(0, per_kind - len(out[kind]))]
    natural = HERE / "data" / f"{name}_natural.jsonl"
    if natural.exists():
        out["natural"] = natural_questions(natural, index)
    return [q for k in KINDS for q in out[k]]
