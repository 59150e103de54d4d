"""Quality report for the PostgreSQL-docs bench questions: `python bench/_pgdocs_check.py`.

Prints the counts per kind and target type, the most questions one page gives a kind, ten
random examples of each kind, and where the gold snippets are found: on the page as this
module extracts it, in the text ragloop's own parser extracts, and in ragloop's chunks (a
question whose passage no chunk of its page holds could never be hit). It also counts
chunks of other pages that `passage_hit` accepts (false hits) and names that leak into
paraphrase questions.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _pgdocs import KINDS, build_corpus, load_questions, passage_hit  # noqa: E402
from _pgdocs_parse import parse, squash  # noqa: E402
from _pgdocs_phrase import mentions  # noqa: E402


def main(seed: int = 0) -> None:
    """Print the report."""
    from ragloop.documents import parse_file
    from ragloop.retrievers.corpus import load_corpus

    dest = build_corpus()
    t0 = time.perf_counter()
    questions = load_questions(dest, seed=seed)
    took = time.perf_counter() - t0
    print(f"corpus: {dest} ({len(list(dest.glob('*.html')))} pages); questions in {took:.1f} s")
    print("per kind:", dict(Counter(q.kind for q in questions)))
    print("per kind and target:", dict(Counter((q.kind, q.target_kind) for q in questions)))
    for kind in KINDS:
        pages = Counter(q.gold_page for q in questions if q.kind == kind)
        print(f"{kind}: {len(pages)} pages, at most {max(pages.values(), default=0)} from one")
    rng = random.Random(seed)
    for kind in KINDS:
        print(f"\n-- {kind} (10 random)")
        pool = [q for q in questions if q.kind == kind]
        for q in rng.sample(pool, min(10, len(pool))):
            print(f"  {q.question}\n     -> {q.gold_page}: {q.gold_snippets[0]!r}")
    leaks = [q for q in questions if q.kind == "paraphrase" and mentions(q.question, q.name)]
    print(f"\nparaphrases that name their target: {len(leaks)}")

    ours = {p.name: squash(parse(p)[0]) for p in dest.glob("*.html")}
    theirs = {p.name: squash(parse_file(p).text) for p in dest.glob("*.html")}
    report = load_corpus(dest)
    chunks = defaultdict(list)
    for doc in report.chunks:
        chunks[Path(doc.metadata["source"]).name].append(doc.page_content)
    print(f"ragloop chunks: {len(report.chunks)} from {report.files} files")
    snippets = [(q, s) for q in questions for s in q.gold_snippets]
    in_ours = sum(squash(s) in ours[q.gold_page] for q, s in snippets)
    in_theirs = sum(squash(s) in theirs[q.gold_page] for q, s in snippets)
    print(f"gold snippets on their page (this module's text): {in_ours}/{len(snippets)}")
    print(f"gold snippets on their page (ragloop's parser):   {in_theirs}/{len(snippets)}")
    for kind in KINDS:
        qs = [q for q in questions if q.kind == kind]
        held = [q for q in qs if any(passage_hit(c, q) for c in chunks[q.gold_page])]
        print(f"{kind}: some chunk of the gold page holds the passage: {len(held)}/{len(qs)}")
        for q in [q for q in qs if q not in held][:3]:
            print(f"    missing: {q.id} {q.gold_snippets[0]!r}")
    false_hits = 0
    for q in rng.sample(questions, min(120, len(questions))):
        for page, texts in chunks.items():
            if page != q.gold_page:
                false_hits += sum(passage_hit(c, q) for c in texts)
    print(f"chunks of other pages that passage_hit accepts (120 questions): {false_hits}")


if __name__ == "__main__":
    main()
