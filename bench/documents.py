"""Documents bench: real documentation sets from Debian packages, one per generator.

For a bounded sample of each set's pages: the share whose title is right (checked against
the generator's own title element, read here with lxml apart from the reader), the share
of chunks that are boilerplate, sections per page, pages skipped (and why) and parse
errors. Missing packages are installed with apt-get (root); a set whose package cannot be
installed is reported, not fatal.

    python bench/documents.py [--pages 60] [--json out.json] [--only git-html,sqlite]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import lxml.html

from ragloop.documents import DocumentError, chunk_document, parse_file
from ragloop.documents.boilerplate import mark_boilerplate

DOC = Path("/usr/share/doc")
_REDIRECT = re.compile(rb"http-equiv=[\"']?refresh", re.IGNORECASE)


def _html(path: Path):  # noqa: ANN202 - an lxml element
    return lxml.html.document_fromstring(path.read_bytes())


def _text(el) -> str:  # noqa: ANN001
    return " ".join(el.text_content().split()) if el is not None else ""


def _title_tag(path: Path) -> str:
    return _text(_html(path).find(".//title"))


def _strip_suffix(sep: str) -> Callable[[Path], set[str]]:
    """<title> without the site part after the last ``sep`` ("Page - Book")."""

    def expect(path: Path) -> set[str]:
        title = _title_tag(path)
        return {title.rsplit(sep, 1)[0] if sep in title else title}

    return expect


def _mdbook(path: Path) -> set[str]:
    """<title> less the book's name (SUMMARY.md's entry), or the page's own first heading."""
    heads = _html(path).xpath("//main//*[self::h1 or self::h2]")
    return _strip_suffix(" - ")(path) | ({_text(heads[0])} if heads else set())


def _mkdocs(path: Path) -> set[str]:
    """<title> less the site (the nav entry's name), or the page's own <h1>."""
    heads = _html(path).xpath("//*[@role='main']//h1")
    return _strip_suffix(" - ")(path) | ({_text(heads[0])} if heads else set())


def _asciidoc_html(path: Path) -> set[str]:
    return {_text(next(iter(_html(path).xpath("//div[@id='header']/h1")), None))}


def _asciidoc_txt(path: Path) -> set[str]:
    lines = path.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines[:-1]):
        if re.fullmatch(r"=+", lines[i + 1].strip()) and line.strip():
            return {line.strip().replace("{litdd}", "--")}
        if line.startswith("= "):
            return {line[2:].strip()}
    return set()


def _texinfo(path: Path) -> set[str]:
    """The node's name from <title>, or the first chapter/section heading (both makeinfo's)."""
    doc = _html(path)
    title = _text(doc.find(".//title"))
    node = re.sub(r"\s*\([^()]*\)$", "", title)
    heads = doc.xpath("//h1[@class='settitle'] | //*[starts-with(name(), 'h')][@class]")
    return {node, title} | ({_text(heads[0])} if heads else set())


def _rustdoc(path: Path) -> set[str]:
    """From <title>: "max in std::cmp - Rust" is std::cmp::max; "std::cmp - Rust" itself."""
    title = _title_tag(path).rsplit(" - ", 1)[0]
    item = re.fullmatch(r"(\S+) in (\S+)", title)
    return {f"{item.group(2)}::{item.group(1)}" if item else title}


def _javadoc(path: Path) -> set[str]:
    """<title> less the API's name, or the page's h1.title (javadoc writes both)."""
    heads = _html(path).xpath("//*[self::h1 or self::h2][contains(@class, 'title')]")
    return {re.sub(r"\s*\([^()]*\)$", "", _title_tag(path))} | (
        {_text(heads[0])} if heads else set()
    )


def _doxygen(path: Path) -> set[str]:
    """<title> less the project ("JsonCpp: Json::Value Class Reference"), else div.title
    (jsoncpp's own header template writes no <title>)."""
    title = _title_tag(path)
    if title:
        return {title.split(": ", 1)[1] if ": " in title else title}
    return {_text(next(iter(_html(path).xpath("//div[@class='headertitle']/div")), None))}


def _pdf(path: Path) -> set[str]:
    from pypdf import PdfReader

    meta = PdfReader(path).metadata
    return {str(meta.title)} if meta and meta.title else set()


@dataclass(frozen=True)
class DocSet:
    name: str
    generator: str
    package: str
    files: Callable[[], list[Path]]
    expect: Callable[[Path], set[str]]


def _glob(root: str, pattern: str, skip: str = r"^$") -> Callable[[], list[Path]]:
    def files() -> list[Path]:
        found = sorted(p for p in (DOC / root).glob(pattern) if not re.search(skip, p.name))
        return [p for p in found if p.is_file() and not _REDIRECT.search(p.read_bytes()[:3000])]

    return files


SETS = [
    DocSet("postgresql", "docbook", "postgresql-doc-15",
           _glob("postgresql-doc-15/html", "*.html"), lambda p: {_title_tag(p)}),
    DocSet("python", "sphinx", "python3.11-doc",
           _glob("python3.11-doc/html", "library/*.html"), _strip_suffix(" — ")),
    DocSet("git-html", "asciidoc", "git-doc", _glob("git-doc", "git*.html"), _asciidoc_html),
    DocSet("git-txt", "asciidoc .txt", "git-doc", _glob("git-doc", "git*.txt"), _asciidoc_txt),
    DocSet("libffi+bash", "texinfo", "bash-doc",
           lambda: _glob("libffi8/html", "*.html")() + [DOC / "bash-doc/bashref.html"], _texinfo),
    DocSet("sqlite", "hand-written", "sqlite3-doc",
           _glob("sqlite3", "*.html", r"^(changes|releaselog|fileio)"), lambda p: {_title_tag(p)}),
    DocSet("rust-book", "mdbook", "rust-doc",
           _glob("rust-doc/html/book", "*.html", r"^(print|toc|404)"), _mdbook),
    DocSet("rust-std", "rustdoc", "rust-doc",
           _glob("rust-doc/html/std", "*/*.html", r"^(sidebar-items|all)"), _rustdoc),
    DocSet("mkdocs", "mkdocs", "mkdocs-doc",
           _glob("mkdocs/html", "**/*.html", r"^404"), _mkdocs),
    DocSet("commons-lang", "javadoc", "libcommons-lang3-java-doc",
           _glob("libcommons-lang3-java/api/org/apache/commons/lang3", "*.html"), _javadoc),
    DocSet("jsoncpp", "doxygen", "libjsoncpp-doc",
           _glob("libjsoncpp-doc", "class*.html", r"-members"), _doxygen),
    DocSet("pdfs", "pdf", "libtasn1-doc",
           lambda: [DOC / "libtasn1-doc/libtasn1.pdf", DOC / "bash-doc/bashref.pdf",
                    DOC / "bash-doc/bash.pdf"], _pdf),
]  # fmt: skip


def ensure(packages: set[str]) -> dict[str, str]:
    """Install what is missing (apt-get); returns {package: why not} for those that failed."""
    missing = [p for p in sorted(packages) if subprocess.run(
        ["dpkg", "-s", p], capture_output=True).returncode != 0]  # fmt: skip
    if not missing:
        return {}
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 0:
        return {}
    return {p: (done.stderr.strip().splitlines() or ["apt-get failed"])[-1] for p in missing}


def norm(text: str) -> str:
    text = re.sub(r"<[\w ,?]*>", "", text)  # type parameters: "Range<T>" is Range
    text = text.replace("’", "'").replace("–", "-").replace("—", "-").replace("¶", "")
    return " ".join(re.sub(r"[^\w:.'()<>-]+", " ", text.casefold()).split()).strip(" .")


def right(title: str, expected: set[str]) -> bool:
    """Same title, or one holds the other and is at least 40% of it ("Class X" for "X")."""
    ours = norm(title)
    for exp in filter(None, map(norm, expected)):
        short, long_ = sorted((ours, exp), key=len)
        if ours == exp or (short and short in long_ and len(short) >= 0.4 * len(long_)):
            return True
    return False


def sample(files: list[Path], n: int) -> list[Path]:
    step = max(1, len(files) // n)
    return files[::step][:n]


def run_set(ds: DocSet, pages: int) -> dict:
    files = sample(ds.files(), pages)
    started = time.perf_counter()
    docs, wrong, errors, skipped = [], [], [], Counter()
    for path in files:
        try:
            doc = parse_file(path)
        except DocumentError as exc:
            skipped[exc.reason] += 1
            continue
        except Exception as exc:  # a reader bug: counted, the bench goes on
            errors.append(f"{path.name}: {type(exc).__name__}: {exc}")
            continue
        docs.append(doc)
        expected = {e for e in ds.expect(path) if e.strip()}
        if expected and not right(doc.title, expected):
            wrong.append(f"{path.name}: {doc.title!r} (expected {sorted(expected)[0]!r})")
    measured = sum(1 for d in docs if any(e.strip() for e in ds.expect(d.path)))
    marked = mark_boilerplate(docs)
    chunks = [c for i, d in enumerate(docs) for c in chunk_document(d, f"{i}")]
    sections = sum(1 for d in docs for s in d.sections if not s.boilerplate)
    return {
        "set": ds.name,
        "generator": ds.generator,
        "pages": len(files),
        "read": len(docs),
        "right_titles": round((measured - len(wrong)) / measured, 3) if measured else None,
        "titled_pages": measured,
        "sections_per_page": round(sections / len(docs), 1) if docs else 0.0,
        "chunks": len(chunks),
        "boilerplate_chunks": round(sum(c.metadata["boilerplate"] for c in chunks) / len(chunks), 3)
        if chunks
        else 0.0,  # fmt: skip
        "boilerplate_dropped": marked.dropped,
        "skipped": dict(skipped),
        "errors": errors[:5],
        "error_count": len(errors),
        "wrong": wrong[:5],
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=60, help="pages sampled per set")
    ap.add_argument("--only", default="", help="comma-separated set names")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    chosen = [s for s in SETS if not args.only or s.name in args.only.split(",")]
    failed = ensure({s.package for s in chosen})
    rows = []
    print("| set | generator | pages read | right titles | sections/page | boilerplate chunks "
          "| repeats dropped | skipped | errors | s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for ds in chosen:
        if ds.package in failed:
            print(f"| {ds.name} | {ds.generator} | not installed: {failed[ds.package]} |")
            continue
        row = run_set(ds, args.pages)
        rows.append(row)
        titles = "n/a" if row["right_titles"] is None else f"{row['right_titles']:.1%}"
        skipped = sum(row["skipped"].values())
        print(
            f"| {row['set']} | {row['generator']} | {row['read']}/{row['pages']} | {titles} "
            f"| {row['sections_per_page']} | {row['boilerplate_chunks']:.1%} "
            f"| {row['boilerplate_dropped']} | {skipped} | {row['error_count']} "
            f"| {row['seconds']} |",
            flush=True,
        )
    for row in rows:
        for line in row["wrong"] + row["errors"] + [f"skipped {n}: {why}" for why, n in
                                                    row["skipped"].items()]:  # fmt: skip
            print(f"  {row['set']}: {line}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False))
    below = [r["set"] for r in rows if r["right_titles"] is not None and r["right_titles"] < 0.98]
    verdict = "met" if not below else "missed on " + ", ".join(below)
    print(f"target >= 98% right titles on every set: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
