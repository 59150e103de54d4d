"""Collect the offline judge's labelled chunk rows: what its evidence score is computed from.

For every answerable question of the four development corpora (``answer_quality.py``'s
corpora and questions), the chunks the judge grades in the loop's first rounds — the union
of the dense, sparse and hybrid top k — each with the parts of its evidence
(``offline_judge.score``): the question-chunk cosine, the best sentence's and the heading's
term coverage, and per name the question gives, how surely the heading and the text name it;
and whether the chunk holds the question's gold passage. ``bench/judge_fit.py`` fits the
judge's weights on them. Usage::

    python bench/_judge_rows.py [--embeddings minilm|wordllama] [--out PATH]

Default output: ``bench/data/judge_rows.csv.gz`` (``judge_rows.NAME.csv.gz`` for another
embedding model). Needs the Debian doc packages (installed with apt-get when run as root).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import gzip
import hashlib
import sys
import time
from pathlib import Path

from _labelled_rows import named
from _loopbench import bench_pipeline
from _pgdocs import passage_hit
from answer_quality import corpus

from ragloop.eval.metrics.semantic import unit_vectors
from ragloop.nodes.base import search, to_item
from ragloop.nodes.evidence import lexical, question_names, split_heading
from ragloop.nodes.judge import judged_text

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "judge_rows.csv.gz"
COLUMNS = (
    "corpus", "qid", "kind", "chunk", "label", "cos", "sentence", "heading", "names",
    "names_heading", "names_text",
)  # fmt: skip


async def rows_of(name: str, embeddings: str, limit: int, natural: int) -> list[list[object]]:
    root, work, qs = corpus(name, limit, natural)
    pipe = bench_pipeline(root, work, embeddings)
    st = pipe.deps.strategies
    k = pipe.context.k
    out: list[list[object]] = []
    for q in qs:
        seen: dict[str, dict] = {}
        for retriever in ("hybrid", "dense", "sparse"):
            for doc in await search(pipe.deps.retrievers[retriever], q.question, k):
                item = to_item(doc)
                seen.setdefault(item["id"], item)
        items = list(seen.values())
        texts = [judged_text(c) for c in items]
        unit = await unit_vectors(st.embeddings, [q.question, *texts])
        names = question_names(q.question, st.common_words)
        qid = hashlib.sha1(f"{name}/{q.question}".encode()).hexdigest()[:10]
        for item, text, vec in zip(items, texts, unit[1:], strict=True):
            heading, body = split_heading(text)
            lex = lexical(q.question, body, heading, st.common_words)
            out.append([
                name, qid, q.kind, item["id"],
                int(passage_hit(item["text"], q, item.get("source"))),
                round(float(vec @ unit[0]), 4), round(lex.sentence, 4), round(lex.heading, 4),
                len(names),
                ";".join(f"{v:.3g}" for v in lex.names_heading),
                ";".join(f"{v:.3g}" for v in lex.names_text),
            ])  # fmt: skip
    return out


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embeddings", default="minilm", choices=("minilm", "wordllama"))
    ap.add_argument("--corpora", default="pg,py,sqlite,bash")
    ap.add_argument("--limit", type=int, default=30)
    ap.add_argument("--natural", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or named(OUT, args.embeddings)
    rows: list[list[object]] = []
    for name in args.corpora.split(","):
        started = time.perf_counter()
        got = await rows_of(name, args.embeddings, args.limit, args.natural)
        print(f"{name}: {len(got)} chunk rows in {time.perf_counter() - started:.0f} s",
              file=sys.stderr)  # fmt: skip
        rows += got
    tmp = out.with_name(out.name + ".part")
    with gzip.open(tmp, "wt", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)
    tmp.replace(out)
    print(f"wrote {out}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
