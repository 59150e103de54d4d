"""Gold passages for the PostgreSQL-docs bench: snippets that point at one page and one passage.

A candidate snippet is kept only when its matching key occurs on its own page and on no other
selected page, and when no other page holds a near-duplicate that ``passage_hit``'s fuzzy
fallback would accept (ABORT's "ABORT rolls back the current transaction ..." against
ROLLBACK's page, initdb's first sentence against pg_ctl's "initdb mode creates ...").
"""

from __future__ import annotations

import json
import warnings
from collections import Counter, defaultdict
from pathlib import Path

from _pgdocs_parse import Target, squash
from rapidfuzz import fuzz

FUZZY_MIN = 90  # partial_ratio for a snippet cut by a chunk boundary or extracted differently
FUZZY_LEN = 40  # squashed chars; shorter ones must match exactly ("bytes in the string")
MAX_SNIPPETS = 2


class PageIndex:
    """Finds where a snippet's matching key occurs, exactly or nearly, across all pages.

    Every GRAM-character piece of each page's key is indexed at every STEP-th position, so
    any common run of GRAM + STEP - 1 characters between a snippet and a page is found
    without scanning the pages: exact occurrences, and near-duplicates (a partial_ratio of
    90 over 40+ characters leaves such a run in practice).
    """

    GRAM, STEP = 12, 6  # a shared run of 17+ characters is always seen

    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys
        self.names = list(keys)
        self.grams: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, text in enumerate(keys.values()):
            for pos in range(0, len(text) - self.GRAM + 1, self.STEP):
                self.grams[text[pos : pos + self.GRAM]].append((i, pos))

    def _starts(self, key: str) -> Counter[tuple[int, int]]:
        """How many indexed pieces put key at (page, start)."""
        out: Counter[tuple[int, int]] = Counter()
        for off in range(len(key) - self.GRAM + 1):
            for i, pos in self.grams.get(key[off : off + self.GRAM], ()):
                out[(i, pos - off)] += 1
        return out

    def holders(self, key: str) -> list[str]:
        """Pages whose key contains `key` exactly (every aligned piece of it agrees)."""
        need = max(1, (len(key) - self.GRAM + 1) // self.STEP)
        pages = sorted({i for (i, _), n in self._starts(key).items() if n >= need})
        return [self.names[i] for i in pages if key in self.keys[self.names[i]]]

    def near(self, key: str, page: str) -> bool:
        """True when a page other than `page` holds a run that partial_ratio scores >= 90."""
        votes: Counter[tuple[int, int]] = Counter()
        for (i, start), n in self._starts(key).items():
            if self.names[i] != page:
                votes[(i, start // 8)] += n
        for (i, bucket), n in votes.items():
            if n < 2:
                continue
            text, start = self.keys[self.names[i]], bucket * 8
            window = text[max(0, start - len(key) // 4) : start + len(key) + len(key) // 4]
            if fuzz.partial_ratio(key, window) >= FUZZY_MIN:
                return True
        return False


def sole(index: PageIndex, snippet: str, page: str) -> bool:
    """True when only `page` holds the snippet, exactly or (40+ characters) nearly."""
    key = squash(snippet)
    if index.holders(key) != [page]:
        return False
    return len(key) < FUZZY_LEN or not index.near(key, page)


def unique_gold(targets: list[Target], index: PageIndex) -> list[tuple[Target, tuple]]:
    """Each target with its gold snippets (at most two, and its entry line when it has one);
    targets whose defining passage has none are dropped.

    The entry line ("pg_dump — extract a PostgreSQL database into a script file or other
    archive file") is gold beside the Description's first sentence: both define the name,
    on the same page, and a chunk holding either is the defining passage. It never decides
    whether a target is asked about, so adding it left the question set as it was.
    """
    out = []
    for target in targets:
        gold = [snip for snip in target.snippets if sole(index, snip, target.page)]
        if gold:
            entry = target.entry and sole(index, target.entry, target.page)
            out.append((target, (*gold[:MAX_SNIPPETS], *([target.entry] if entry else []))))
    return out


def natural_rows(path: Path, index: PageIndex) -> list[tuple[int, dict]]:
    """(line number, row) of the hand-written questions; a bad row is reported and skipped."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            page, snippets = row["gold_page"], row["gold_snippets"]
            if page not in index.keys:
                raise ValueError(f"{page} is not in the corpus")
            if not isinstance(snippets, list) or not snippets:
                raise ValueError("gold_snippets must be a non-empty list")
            bad = [s for s in snippets if not sole(index, s, page)]
            if bad:
                raise ValueError(f"snippet not on {page} alone: {bad[:1]}")
            if not str(row["question"]).strip():
                raise ValueError("empty question")
            out.append((n, row))
        except KeyError as exc:
            warnings.warn(f"{path.name}:{n}: skipped (missing field {exc})", stacklevel=3)
        except (ValueError, TypeError) as exc:
            warnings.warn(f"{path.name}:{n}: skipped ({type(exc).__name__}: {exc})", stacklevel=3)
    return out
