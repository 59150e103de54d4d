"""AsciiDoc (``.adoc``, ``.asciidoc``, AsciiDoc ``.txt``): sections, labelled lists, code.

A line reader for the part of AsciiDoc that documentation uses: titles (``= Title`` or a
line underlined with ``=-~^+``), sections, ``term::`` labelled lists (read as "term:
description", one record, so an option keeps its dashes and its meaning together),
listing/literal blocks and ``[verse]`` paragraphs as code, lists, tables, admonitions
and inline markup reduced to its text. The asciidoc tool itself is not used: it runs
``sys::`` macros unless told not to, needs each project's configuration for its own
macros (git's ``linkgit:``) and renders HTML that would then be read back.
"""

from __future__ import annotations

import re
from pathlib import Path

from ragloop.documents.asciidoc_blocks import (
    CODE_DELIMS,
    DELIMITED,
    ITEM,
    LABEL,
    Reader,
    delimited,
    labelled,
    read_inner,
    table_rows,
)
from ragloop.documents.model import ParsedDocument, guess_title

_ONE_LINE_TITLE = re.compile(r"^(={1,6})\s+(\S.*?)(?:\s+=+)?\s*$")
_UNDERLINE = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_ATTRIBUTE_ENTRY = re.compile(r"^:(!?[\w][\w-]*!?):(?:\s+(.*))?$")
_BLOCK_ATTRS = re.compile(r"^\[(\[?[^\]]*\]?)\]\s*$")
_BLOCK_TITLE = re.compile(r"^\.([^\s.].*)$")
_DIRECTIVE = re.compile(r"^(ifdef|ifndef|ifeval|endif|include)::")


def _underline(title: str, line: str) -> int:
    """The level a two-line title's underline gives, or 0 when ``line`` is none."""
    if len(line) < 2 or len(set(line)) != 1 or line[0] not in _UNDERLINE:
        return 0
    if abs(len(line) - len(title.rstrip())) > 2 or not re.match(r"^[\w'\"`(<{]", title):
        return 0
    return _UNDERLINE[line[0]]


def parse_asciidoc(text: str, path: Path) -> ParsedDocument:
    """Parse AsciiDoc into sections; labelled list entries are records of term + description."""
    lines = text.replace("\r\n", "\n").replace("\t", "        ").split("\n")
    r = Reader(lines)
    i, n = 0, len(lines)
    while i < n:
        line = lines[i].rstrip()
        nxt = lines[i + 1].rstrip() if i + 1 < n else ""
        if not line.strip():
            i += 1
            continue
        if line == "+" or (line.startswith("//") and not line.startswith("////")):
            i += 1
            continue
        if _DIRECTIVE.match(line):
            i += 1
            continue
        entry = _ATTRIBUTE_ENTRY.match(line)
        if entry:
            r.attributes[entry.group(1).strip("!").lower()] = entry.group(2) or ""
            i += 1
            continue
        one = _ONE_LINE_TITLE.match(line)
        if one:
            r.heading(len(one.group(1)), one.group(2))
            i += 1
            continue
        level = _underline(line, nxt) if not DELIMITED.match(line) else 0
        if level:
            r.heading(level, line.strip())
            i += 2
            continue
        attrs = _BLOCK_ATTRS.match(line)
        if attrs:
            value = attrs.group(1)
            if value.startswith("[") and value.endswith("]"):
                r.anchor = value.strip("[]").split(",")[0]
            else:
                r.style = value.split(",")[0].strip().lower()
            i += 1
            continue
        block_title = _BLOCK_TITLE.match(line)
        if block_title and not ITEM.match(line):
            r.lead = r.text(block_title.group(1))
            i += 1
            continue
        fence = DELIMITED.match(line)
        if fence:
            body, i = delimited(lines, i, line)
            kind = fence.group(1)
            if kind.startswith("|"):
                for row in table_rows(body):
                    r.out.text(r.text(row), row=True)
            elif kind[0] in CODE_DELIMS and kind != "--" or r.style in ("source", "listing"):
                r.code("\n".join(body))
            elif kind[0] not in "/+":  # example, sidebar, quote, open: read what is inside
                read_inner(r, body)
            r.style = ""
            continue
        label = LABEL.match(line)
        if label and not line.startswith((" ", "\t")) and not ITEM.match(line):
            i = labelled(r, lines, i)
            continue
        item = ITEM.match(line)
        if item:
            para = [item.group(2)]
            i += 1
            while i < n and lines[i].strip() and not ITEM.match(lines[i]) and lines[i] != "+":
                para.append(lines[i].strip())
                i += 1
            r.emit("- " + r.text(" ".join(para)))
            continue
        para = []
        while i < n and lines[i].strip() and lines[i].rstrip() != "+":
            if para and (DELIMITED.match(lines[i].rstrip()) or _BLOCK_ATTRS.match(lines[i])):
                break
            para.append(lines[i])
            i += 1
        if not para:  # a line no rule took: read it as text rather than loop on it
            para, i = [lines[i]], i + 1
        r.paragraph(para)
        r.style = ""
    title = r.title or guess_title(text, path)
    sections = r.out.finish()
    for section in sections:  # sections read before the title (or with none) go under it
        if section.heading_path[:1] != (title,):
            section.heading_path = (title, *section.heading_path)
    return ParsedDocument(path, title, sections, generator="asciidoc")
