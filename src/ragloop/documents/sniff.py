"""What markup a ``.txt`` file is written in: AsciiDoc, reStructuredText, Markdown or none.

Git's man pages, Python's ``_sources/*.rst.txt`` and many READMEs are ``.txt``; each
markup leaves signs no other one uses, counted over the first lines; the most wins and
a file with none is plain text.
"""

from __future__ import annotations

import re

_SIGNS = {
    "asciidoc": re.compile(
        r"^(=+ \S.*"
        r"|\[(verse|listing|literal|source|quote|NOTE|TIP|WARNING|IMPORTANT|CAUTION|horizontal)\b.*\]"
        r"|\[\[[\w-]+\]\]"
        r"|(ifdef|ifndef|endif|include)::\S*\[.*\]"
        r"|:[\w-]+:( .*)?"
        r"|\S.*(::|;;)"  # a labelled list entry (rst's "para::" needs an indented block)
        r"|.*\blinkgit:\S+\[.*"
        r"|.*<<[\w-]+(,[^>]*)?>>.*"
        r"|\+)$"
    ),
    "rst": re.compile(
        r"^(\.\. [\w:-]+::.*|\.\. _[^:]+:.*|\.\. \|.*|.*:[\w:.+-]+:`[^`]+`.*|.*`[^`]+`__?(\W.*)?)$"
    ),
    "markdown": re.compile(
        r"^(#{1,6} \S.*|```.*|~~~.*|.*\]\([^)\s]+\).*|\s*\|?\s*:?-{3,}:?\s*\|.*)$"
    ),
}
_SAMPLE_LINES = 400


def sniff_markup(text: str) -> str:
    """``"asciidoc"``, ``"rst"``, ``"markdown"`` or ``"text"`` for a ``.txt`` file's text."""
    lines = text.replace("\r\n", "\n").split("\n")[:_SAMPLE_LINES]
    counts = dict.fromkeys(_SIGNS, 0)
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        for name, sign in _SIGNS.items():
            if not sign.match(line):
                continue
            if name == "asciidoc" and line.rstrip().endswith("::") and not nxt.strip():
                continue  # rst's literal-block "Example::" is followed by a blank line
            if name == "asciidoc" and line.startswith(":") and "`" in line:
                continue  # an rst role opening a line
            counts[name] += 1
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] >= 2 else "text"
