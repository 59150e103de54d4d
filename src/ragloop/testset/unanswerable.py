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
from dataclasses import dataclass, field

from ragloop.testset import forms
from ragloop.testset.offline import UNANSWERABLE, Draft, best_part, is_api, subject_of
from ragloop.testset.passages import Passage

PLATFORMS = (
    "Windows", "macOS", "Linux", "FreeBSD", "OpenBSD", "Solaris", "AIX", "Android", "iOS",
    "Haiku", "z/OS", "OpenVMS", "WebAssembly", "Raspberry Pi",
)  # fmt: skip
SWAPS = (
    ("north", "south"), ("east", "west"), ("upper", "lower"), ("min", "max"), ("first", "last"),
    ("begin", "end"), ("before", "after"), ("inner", "outer"), ("left", "right"),
    ("read", "write"), ("input", "output"), ("encode", "decode"), ("start", "stop"),
)  # fmt: skip
#: counterparts that also start a longer word ("Northgate" beside "Southgate")
PREFIXES = frozenset({"north", "south", "east", "west"})
_VERSION = re.compile(
    r"\b(?P<product>version|release|python|postgresql|v)\s+(?P<major>\d{1,2})(?:\.(?P<minor>\d{1,2}))?\b",
    re.IGNORECASE,
)


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

    @classmethod
    def of(cls, vocab: str) -> NearMisses:
        found = list(_VERSION.finditer(vocab))
        out = cls(vocab=vocab)
        if found:
            product = Counter(m["product"].lower() for m in found).most_common(1)[0][0]
            out.product = {"python": "Python", "postgresql": "PostgreSQL"}.get(product, "version")
            dotted = [m for m in found if m["minor"]]
            if len(dotted) >= len(found) / 2:
                major = Counter(m["major"] for m in dotted).most_common(1)[0][0]
                top = max(int(m["minor"]) for m in dotted if m["major"] == major)
                wanted = [f"{major}.{top + d}" for d in (2, 3, 4)]
            else:
                top = max(int(m["major"]) for m in found)
                wanted = [str(top + d) for d in (2, 3, 4)]
            out.versions = [v for v in wanted if not present(v, vocab)]
        named = [p for p in PLATFORMS if present(p, vocab)]
        if named:
            out.platforms = [p for p in PLATFORMS if p not in named]
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
                    if not present(swapped, self.vocab):
                        return swapped, swapped
        return None


def platforms_named(text: str, near: NearMisses) -> bool:
    """Whether a passage names a platform ("Availability: Unix, Windows"): its neighbours
    are then near misses; a pure function's platform is no question anyone asks."""
    low = text.lower()
    return any(present(p, low) for p in (*PLATFORMS, "Unix", "POSIX") if p not in near.platforms)


def _options(name: str, text: str, near: NearMisses) -> list[tuple[str, str, str]]:
    """(question, what the documents do not say, the absent term) for each near miss."""
    options: list[tuple[str, str, str]] = []
    api = is_api(name)
    for version in near.versions[:2]:
        v = f"{near.product} {version}" if near.product != "version" else f"version {version}"
        if api:
            options.append(
                (f"What changed in {name} in {v}?", f"what changed in {name} in {v}", version)
            )
            options.append(
                (
                    f"Is {name} deprecated as of {v}?",
                    f"whether {name} is deprecated as of {v}",
                    version,
                )
            )
        else:
            topic = name.lower() if forms.is_topic(name) else name
            options.append((f"What changed about {topic} in {v}?", f"what changed in {v}", version))
    if api and name == name.lower() and " " not in name and platforms_named(text, near):
        for platform in near.platforms[:3]:  # a program or function whose text names platforms
            options.append(
                (
                    f"Does {name} work on {platform}?",
                    f"whether {name} works on {platform}",
                    platform,
                )
            )
            options.append(
                (
                    f"Is {name} available on {platform}?",
                    f"whether {name} is available on {platform}",
                    platform,
                )
            )
    return options


def unanswerable(passage: Passage, near: NearMisses, rng: random.Random) -> Draft | None:
    """A near miss about the passage's subject (None when the corpus offers none)."""
    part = best_part(passage, rng)
    name = subject_of(part, passage) if part else ""
    if not name or part is None:
        return None
    options = _options(name, passage.text, near)
    names = [name, *_NAMED.findall(" ".join(part.sentences[:4]))]
    swapped = next((s for n in names if (s := near.neighbour(n))), None)
    if swapped:
        other = swapped[0]
        options.append((f"Where can I find {other}?", f"anything about {other}", other))
        options.append((f"What is {other}?", f"anything about {other}", other))
    if not options:
        return None
    question, missing, term = rng.choice(options)
    reference = f"The documents do not say {missing}."
    extra = {"absent_terms": [term], "neighbour_context_ids": [passage.id], "near_miss_of": name}
    return Draft(UNANSWERABLE, question, reference, (), name, extra)
