"""Named questions on git's asciidoc man pages: is the page's description found and quoted?

For each sampled man page (git-doc's HTML, or its AsciiDoc .txt with ``--txt``), the
question "What does git-X do?" is asked to hybrid retrieval (k = 5) and to the offline
loop. Page hit: a retrieved chunk comes from the page; passage hit: a retrieved chunk
holds the page's NAME line ("git-X - <description>"). Also counted: answers that quote
the man-page suite's boilerplate ("Part of the git(1) suite").

    python bench/manpages.py [--pages 80] [--txt]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

from ragloop.config import load_settings
from ragloop.pipeline import build_pipeline

GIT_DOC = Path("/usr/share/doc/git-doc")
BOILERPLATE = "Part of the git(1) suite"


def name_line(page: Path) -> tuple[str, str] | None:
    """(command, description) from the page's source NAME section."""
    src = page.with_suffix(".txt")
    text = src.read_text(errors="replace") if src.exists() else ""
    found = re.search(r"^NAME\n-+\n(\S+) - (.+)$", text, re.MULTILINE)
    return (found.group(1).replace("{litdd}", "--"), found.group(2).strip()) if found else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=80)
    ap.add_argument("--txt", action="store_true", help="index the .txt sources instead")
    args = ap.parse_args(argv)
    suffix = ".txt" if args.txt else ".html"
    pages = sorted(p for p in GIT_DOC.glob(f"git-*{suffix}") if name_line(p))
    pages = pages[:: max(1, len(pages) // args.pages)][: args.pages]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        for p in pages:
            shutil.copy(p, corpus / p.name)
        settings = load_settings(
            index_dir=Path(tmp) / "idx", corpus_dir=corpus, embeddings="wordllama"
        )
        pipe = build_pipeline(settings, env={})
        hybrid = pipe.deps.retrievers["hybrid"]
        page_hit = passage_hit = quoted = answered_desc = 0
        for p in pages:
            command, description = name_line(p) or ("", "")
            question = f"What does {command} do?"
            docs = hybrid.invoke(question)
            page_hit += any(d.metadata["source"] == p.name for d in docs)
            passage_hit += any(
                d.metadata["source"] == p.name
                and description[:40] in " ".join(d.page_content.split())
                for d in docs
            )
            answer = pipe.run(question).answer
            quoted += BOILERPLATE in answer
            answered_desc += description[:40] in " ".join(answer.split())
    n = len(pages)
    print(f"git man pages ({suffix}, {n} pages, hybrid k=5, wordllama, offline loop)")
    print(f"  page hit     {page_hit / n:.3f}")
    print(f"  passage hit  {passage_hit / n:.3f}  (a chunk holds the NAME line)")
    print(f"  answers quoting the NAME line  {answered_desc / n:.3f}")
    print(f"  answers quoting '{BOILERPLATE}'  {quoted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
