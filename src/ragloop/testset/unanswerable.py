"""Unanswerable questions: near misses built from the corpus's own vocabulary.

Each asks about a real subject of the corpus, one step beside what the corpus covers:

- a version the corpus never names, next to the ones it does ("What changed in CREATE INDEX
  in PostgreSQL 17?" where the docs stop at 15);
- a platform the corpus never names, about a program or function whose passage names
  others ("Does os.cpu_count work on Haiku?" beside "Availability: Unix, Windows");
- a neighbouring name: a named thing with one word swapped for its counterpart that the
  corpus never uses ("Southgate Branch" beside "Northgate Branch").

The missing word is checked absent from every passage (whole word), kept as
``absent_terms``; the reference says the documents do not say.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ragloop.testset import forms
from ragloop.testset.offline import (
    UNANSWERABLE,
    Draft,
    best_part,
    is_api,
    short_name,
    subject_of,
)
from ragloop.testset.passages import Passage

PLATFORMS = (
    "Windows", "macOS", "Linux", "FreeBSD", "OpenBSD", "Solaris", "AIX", "Android", "iOS",
    "Haiku", "z/OS", "OpenVMS", "WebAssembly",
)  # fmt: skip
#: a platform a family name covers: "Availability: Unix" answers "Does it work on FreeBSD?"
FAMILIES = {
    "unix": ("Linux", "macOS", "FreeBSD", "OpenBSD", "Solaris", "AIX", "z/OS", "Android", "iOS"),
    "posix": ("Linux", "macOS", "FreeBSD", "OpenBSD", "Solaris", "AIX", "z/OS"),
    "bsd": ("FreeBSD", "OpenBSD", "macOS"),
    "emscripten": ("WebAssembly",),
    "wasi": ("WebAssembly",),
    "wasm": ("WebAssembly",),
    "apple": ("macOS", "iOS"),
    "mobile": ("Android", "iOS"),
}
#: words of table captions and page furniture: a name holding one is no thing to ask about
FURNITURE = frozenset(
    re.findall(
        r"\w+",
        "column columns row rows table tables string strings value values type types function "
        "functions section sections example examples figure note notes using",
    )
)
SWAPS = (
    ("north", "south"), ("east", "west"), ("upper", "lower"), ("min", "max"), ("first", "last"),
    ("begin", "end"), ("before", "after"), ("inner", "outer"), ("left", "right"),
    ("read", "write"), ("input", "output"), ("encode", "decode"), ("start", "stop"),
)  # fmt: skip
#: counterparts that also start a longer word ("Northgate" beside "Southgate")
PREFIXES = frozenset({"north", "south", "east", "west"})
_VERSION = re.compile(
    r"\b(?P<product>version|release|python|postgresql|sqlite|bash|v)\s+"
    r"(?P<major>\d{1,2})(?:\.(?P<minor>\d{1,2}))?\b(?!\s+\d)",  # not "./bash 1 2 3"
    re.IGNORECASE,
)


#: a capitalised word that opens a clause, not a name ("Before Python starts ...")
OPENERS = frozenset(["before", "after", "when", "if", "in", "on", "for", "since", "until"])
PRODUCTS = {"python": "Python", "postgresql": "PostgreSQL", "sqlite": "SQLite", "bash": "Bash"}
_NAMED = re.compile(r"\b(?!The )[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}\b")


def present(term: str, vocab: str) -> bool:
    """Whether ``term`` occurs as a whole word (or phrase) in the lower-cased corpus text."""
    return re.search(rf"(?<![\w.]){re.escape(term.lower())}(?![\w]|\.\d)", vocab) is not None


@dataclass
class NearMisses:
    """What the corpus covers and the neighbours it does not, read once per corpus."""

    product: str = ""
    versions: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)
    vocab: str = ""
    #: the word sets of the corpus's headings: a neighbour one of them covers is no near miss
    headings: list[frozenset[str]] = field(default_factory=list)
    #: how many near misses of each kind were made (the least made goes first)
    made: Counter[str] = field(default_factory=Counter)
    #: how many passages offered each kind
    offered: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, vocab: str, headings: Iterable[str] = ()) -> NearMisses:
        found = list(_VERSION.finditer(vocab))
        out = cls(vocab=vocab, headings=sorted({_words(h) for h in headings}, key=sorted))
        if found:
            products = Counter(
                m["product"].lower() for m in found if m["product"].lower() in PRODUCTS
            )
            product = (
                products.most_common(1)[0][0] if products else ""
            )  # "Python 3.18", not "version"
            out.product = PRODUCTS.get(product, "version")
            # the newest release series the text keeps naming (a stray "version 21.3" of
            # something else, named once, is not it)
            series = Counter(int(m["major"]) for m in found)
            top = max(series.values())
            major = max(m for m, n in series.items() if n >= min(2, top))
            minors = [int(m["minor"]) for m in found if int(m["major"]) == major and m["minor"]]
            if minors:  # the newest release named is 3.11: 3.13, 3.14 and 3.15 are not covered
                wanted = [f"{major}.{max(minors) + d}" for d in (2, 3, 4)]
            else:  # PostgreSQL 15: 17, 18 and 19
                wanted = [str(major + d) for d in (2, 3, 4)]
            # a bare major ("17") is any number: look for it as a version ("PostgreSQL 17")
            said = [f"{m['product']} " for m in found] if "." not in wanted[0] else [""]
            out.versions = [v for v in wanted if not any(present(p + v, vocab) for p in said)]
        named = [p for p in PLATFORMS if present(p, vocab)]
        if named:
            covered = {p for family, members in FAMILIES.items() if present(family, vocab)
                       for p in members}  # fmt: skip
            out.platforms = [p for p in PLATFORMS if p not in named and p not in covered]
        return out

    def neighbour(self, name: str) -> tuple[str, str] | None:
        """``name`` with one word swapped for its counterpart, when the corpus lacks it."""
        for a, b in SWAPS:
            if re.search(rf"(?i)\b{a}", name) and re.search(rf"(?i)\b{b}", name):
                continue  # "Input and Output Syntax" names both already
            for old, new in ((a, b), (b, a)):
                end = "" if old in PREFIXES else r"\b"  # "Northgate"; not "Writer" -> "Readr"
                match = re.search(rf"(?i)(?<![a-z]){old}{end}", name)
                if match:
                    cased = new.capitalize() if match.group()[0].isupper() else new
                    swapped = name[: match.start()] + cased + name[match.end() :]
                    if not self.covered(swapped) and _askable(swapped):
                        return swapped, swapped
        return None

    def covered(self, name: str) -> bool:
        """Whether the corpus has ``name``, or a heading holding all its words ("Date Output"
        beside "Date/Time Output")."""
        wanted = _words(name)
        return present(name, self.vocab) or any(wanted <= h for h in self.headings)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in re.findall(r"[A-Za-z0-9]+", text))


def _askable(name: str) -> bool:
    """A name one could ask about: at most four words, no caption word ("Input Columns
    Column"), no word twice, not a phrase that starts with a verb ("Using JSON-Format ...")."""
    low = [w.lower() for w in re.findall(r"[\w/]+", name)]
    return (
        0 < len(low) <= 4
        and len(set(low)) == len(low)
        and not (len(low) > 1 and FURNITURE & set(low))
        and not low[0].endswith("ing")
    )


def platforms_named(text: str, near: NearMisses) -> bool:
    """Whether a passage names a platform ("Availability: Unix, Windows"): its neighbours
    are then near misses; a pure function's platform is no question anyone asks."""
    low = text.lower()
    return any(present(p, low) for p in (*PLATFORMS, "Unix", "POSIX") if p not in near.platforms)


def _options(name: str, text: str, near: NearMisses) -> dict[str, list[tuple[str, str, str]]]:
    """Near misses by kind (versions, platforms), each a list of (question, what the documents
    do not say, the absent term)."""
    api = is_api(name)
    if not (api or forms.is_topic(name)):
        return {}  # a heading phrase ("Special Values") makes no believable near miss
    topic = (
        name if api else re.sub(r"^(?:introduction to|overview of|basics of)\s+", "", name.lower())
    )
    versions = []
    for version in near.versions[:2]:
        v = f"{near.product} {version}" if near.product != "version" else f"version {version}"
        about = "in" if api else "about"
        versions.append((f"What changed {about} {topic} in {v}?", f"what changed in {v}", version))
        if api:
            versions.append(
                (f"Does {name} behave differently in {v}?", f"how {name} behaves in {v}", version)
            )
            versions.append(
                (
                    f"I'm upgrading to {v}. Do I need to change how I use {name}?",
                    f"what {v} changes about {name}",
                    version,
                )
            )
        else:
            versions.append(
                (
                    f"We're moving to {v}: is anything different about {topic} there?",
                    f"what {v} changes about {topic}",
                    version,
                )
            )
    platforms = []
    if api and " " not in name and platforms_named(text, near):
        for platform in near.platforms[:3]:  # a program or function whose text names platforms
            platforms.append(
                (
                    f"Does {name} work on {platform}?",
                    f"whether {name} works on {platform}",
                    platform,
                )
            )
            platforms.append(
                (
                    f"Can I use {name} on {platform}?",
                    f"whether {name} can be used on {platform}",
                    platform,
                )
            )
    return {k: v for k, v in (("version", versions), ("platform", platforms)) if v}


_OPTION = re.compile(r"(?<![\w-])--?[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b|(?<![\w-])--[a-z][a-z0-9]+\b")


def _neighbour_option(name: str, sentences: Iterable[str], near: NearMisses) -> str:
    """An option the passage names ("--data-only") with a word swapped for its counterpart
    that the corpus never names ("--data-first" is not; "--read-only" -> "--write-only")."""
    if not is_api(name):
        return ""
    for option in _OPTION.findall(" ".join(sentences)):
        for a, b in SWAPS:
            for old, new in ((a, b), (b, a)):
                swapped = re.sub(rf"(?<=[-_]){old}(?=$|[-_])", new, option, count=1)
                if swapped != option and not near.covered(swapped):
                    return swapped
    return ""


def unanswerable(passage: Passage, near: NearMisses, rng: random.Random) -> Draft | None:
    """A near miss about the passage's subject (None when the corpus offers none): a kind of
    near miss first (a version, a platform, a neighbouring name), then one of its questions."""
    part = best_part(passage, rng)
    name = subject_of(part, passage) if part else ""
    if not name or part is None:
        return None
    kinds = _options(name, passage.text, near)
    if name == short_name(passage.doc_title) and not is_api(name):
        kinds.pop("version", None)  # "What changed about frequently asked questions ...?"
    names = [name, *_NAMED.findall(" ".join(part.sentences[:4]))]
    names = [n for n in names if n.split()[0].lower() not in OPENERS]
    swapped = next((s for n in names if _askable(n) and (s := near.neighbour(n))), None)
    if swapped:
        other = swapped[0]
        if is_api(other):
            asks = [f"What does {other} do?", f"When should I use {other}?"]
        else:
            verb = "do" if other.endswith("s") and not other.endswith("ss") else "does"
            asks = [f"What is {other}?", f"How {verb} {other} work?"]
        kinds["neighbour"] = [(q, f"anything about {other}", other) for q in asks]
    option = _neighbour_option(name, part.sentences[:6], near)
    if option:
        asks = [
            f"How do I use the {option} option of {name}?",
            f"What does {option} do in {name}?",
        ]
        kinds["option"] = [(q, f"anything about {option} in {name}", option) for q in asks]
    if not kinds:
        return None
    near.offered.update(list(kinds))
    least = min(near.made[k] for k in kinds)
    kind = rng.choice(sorted(k for k in kinds if near.made[k] == least))
    if any(near.made[kind] > 2 * near.made[k] + 1 for k in near.offered if k != kind):
        return None  # this kind is well ahead of one the corpus also offers: wait for that one
    near.made[kind] += 1
    question, missing, term = rng.choice(kinds[kind])
    reference = f"The documents do not say {missing}."
    extra = {"absent_terms": [term], "neighbour_context_ids": [passage.id], "near_miss_of": name}
    return Draft(UNANSWERABLE, question, reference, (), name, extra)
