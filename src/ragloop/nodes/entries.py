"""Entry lines: where a reference manual gives a name its own line (a signature
"asind ( double precision )", a term "wal_buffers (integer): ...", an entry
"pg_restore — restore ..."), and what a page is about ("REINDEX" of "REINDEX › Description").

Where a table or a definition list documents many names under one heading, the entry line,
not the heading, says which passage is the name's own (``evidence`` and the answer's
``name_entry`` and ``subject_entry`` features read it).
"""

from __future__ import annotations

import functools
import re

from ragloop.documents.chunking import SEPARATOR
from ragloop.nodes.lines import is_code
from ragloop.text import option_entries

#: what joins the parts of a qualified name: "os.path.join", "std::vec::Vec"
_QUALIFIER = re.compile(r"\.|::")
#: a signature line: up to two keywords ("class", "PRAGMA", "pub fn"), a qualified name and
#: its opening parenthesis: "class subprocess.Popen(", "PRAGMA schema.table_info(table-name);"
_SIGNATURE = re.compile(
    r"^[ \t]*(?:[A-Za-z]+[ \t]+){0,2}((?:[A-Za-z_$][\w$]*(?:\.|::))*[A-Za-z_$][\w$]*)[ \t]*\(",
    re.M,
)
#: what follows a page's subject in its title: "select — Waiting for I/O completion"
_PAGE_SUBJECT = re.compile(r"\s+[\u2014\u2013:-]\s")


@functools.lru_cache(maxsize=65536)
def _definition_pattern(name: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(p) for p in name.split())
    # at a line's start (after a list bullet): a signature "asind ( double precision )",
    # a term "wal_buffers (integer): ...", an entry "pg_restore — restore ..."
    return re.compile(rf"^[ \t]*(?:[-*] )?{body}[ \t]*(?:\(|:|\u2014|\u2013|-[ \t])", re.I | re.M)


def defines(name: str, text: str) -> float:
    """How surely ``text`` holds the entry that defines ``name``: a line that starts with it
    written as a signature, a term or an entry (1; its last dotted part so written, 0.8);
    for an option ("--ignore-case"), an option entry line that lists it (``option_entries``).

    Where a table or a definition list documents many names under one heading, that line,
    not the heading, says which passage is the name's own.
    """
    if not text:
        return 0.0
    if name.startswith("-"):
        return 1.0 if name.lower() in option_entries(text) else 0.0
    if _definition_pattern(name).search(text):
        return 1.0
    parts = _QUALIFIER.split(name.lower())
    tail = parts[-1] if len(parts) > 1 else ""
    written = 0.8 if len(tail) >= 3 and _definition_pattern(tail).search(text) else 0.0
    return max(written, _signature(parts, text)) if parts[-1] in text.lower() else written


def _signature(parts: list[str], text: str) -> float:
    """How surely a signature line of ``text`` is the entry of the name split into ``parts``:
    1 when it writes the whole name, under a qualifier or keyword of its own or none
    ("class subprocess.Popen(", "PRAGMA schema.table_info(" for "table_info"); 0.8 when
    it leaves out the name's leading qualifiers, as a reference does under its class or
    module ("Popen.wait(timeout=None)" for "subprocess.Popen.wait"). A line of prose
    ("Use Popen.communicate() when ...") is no signature (``lines.is_code``), nor is a
    name under another qualifier ("Process.wait(" for "subprocess.Popen.wait")."""
    best = 0.0
    for m in _SIGNATURE.finditer(text):
        written = [p.lower() for p in _QUALIFIER.split(m.group(1))]
        common = 0
        while common < min(len(written), len(parts)) and written[-1 - common] == parts[-1 - common]:
            common += 1
        if common < min(len(written), len(parts)):
            continue  # another qualifier: "Process.wait" is not "Popen.wait"
        if common == 0 or (common < len(parts) and len(parts[-1]) < 3):
            continue
        end = text.find("\n", m.end())
        if not is_code(text[m.start() : end if end >= 0 else len(text)]):
            continue
        best = max(best, 1.0 if common == len(parts) else 0.8)
        if best == 1.0:
            break
    return best


@functools.lru_cache(maxsize=8192)
def page_subject(heading: str) -> str:
    """What a heading path's page is about: "REINDEX" of "REINDEX › Description", "os" of
    "os — Miscellaneous operating system interfaces › Files"."""
    top = heading.split(SEPARATOR)[0].strip()
    return _PAGE_SUBJECT.split(top, maxsplit=1)[0].strip()


def subject_entry(sentence: str, before: str, heading: str) -> float:
    """1 when ``sentence`` starts with the subject of ``heading`` (the one it sits under:
    "REINDEX" of "REINDEX › Description") or is (or follows) the subject's entry line."""
    subject = page_subject(heading)
    if len(subject) < 2 or len(subject.split()) > 4:
        return 0.0
    if _subject_start(subject).match(sentence):
        return 1.0
    return max(defines(subject.lower(), sentence), defines(subject.lower(), before))


@functools.lru_cache(maxsize=8192)
def _subject_start(subject: str) -> re.Pattern[str]:
    return re.compile(rf"\s*{re.escape(subject)}(?![\w])", re.I)
