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

from ragloop.documents.model import ParsedDocument, SectionBuilder, clean_text, guess_title

_ONE_LINE_TITLE = re.compile(r"^(={1,6})\s+(\S.*?)(?:\s+=+)?\s*$")
_UNDERLINE = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_DELIMITED = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|/{4,}|\+{4,}|--|\|={3,})\s*$")
_CODE_DELIMS = ("-", ".")
_LABEL = re.compile(r"^\s*(\S.*?)(:{2,4}|;;)(?:\s+(.*))?$")
_ATTRIBUTE_ENTRY = re.compile(r"^:(!?[\w][\w-]*!?):(?:\s+(.*))?$")
_BLOCK_ATTRS = re.compile(r"^\[(\[?[^\]]*\]?)\]\s*$")
_BLOCK_TITLE = re.compile(r"^\.([^\s.].*)$")
_ITEM = re.compile(r"^\s*([*\-]{1,5}|\.{1,5}|\d+\.|[a-z]\.)\s+(\S.*)$")
_ADMONITION = re.compile(r"^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s+(.*)$")
_DIRECTIVE = re.compile(r"^(ifdef|ifndef|ifeval|endif|include)::")
_MACRO = re.compile(
    r"\b(?:linkgit|link|xref|mailto|https?|ftp|file|image|footnote):(\S*?)\[([^\]]*)\]"
)
_XREF = re.compile(r"<<([^,>]+)(?:,\s*([^>]+))?>>")
_QUOTED = re.compile(r"(?<![\w\\])(\+\+|``|\*\*|__|##|[`'*_+#])(?=\S)(.+?)(?<=\S)\1(?![\w])")
_ATTR_REF = re.compile(r"\{([\w-]+)\}")
BUILTIN_ATTRIBUTES = {
    "litdd": "--", "empty": "", "nbsp": " ", "sp": " ", "startsb": "[", "endsb": "]",
    "caret": "^", "plus": "+", "tilde": "~", "apostrophe": "'", "backtick": "`",
    "amp": "&", "lt": "<", "gt": ">", "vbar": "|", "asterisk": "*", "two-colons": "::",
}  # fmt: skip


def inline(text: str, attributes: dict[str, str], *, lines: bool = False) -> str:
    """Inline markup to its text: ``linkgit:git-config[1]`` -> ``git-config(1)``, quotes
    and passthroughs unwrapped, ``{attribute}`` references replaced."""

    def macro(m: re.Match[str]) -> str:
        target, label = m.group(1), m.group(2)
        if m.group(0).startswith("linkgit:"):
            return f"{target}({label})"
        return label or target

    text = _MACRO.sub(macro, text)
    text = _XREF.sub(lambda m: m.group(2) or m.group(1), text)
    for _ in range(2):  # nested quotes: '`--foo`'
        text = _QUOTED.sub(lambda m: m.group(2), text)
    text = _ATTR_REF.sub(lambda m: attributes.get(m.group(1).lower(), m.group(0)), text)
    text = text.replace("\\", "")
    return text if lines else clean_text(text)


def _underline(title: str, line: str) -> int:
    """The level a two-line title's underline gives, or 0 when ``line`` is none."""
    if len(line) < 2 or len(set(line)) != 1 or line[0] not in _UNDERLINE:
        return 0
    if abs(len(line) - len(title.rstrip())) > 2 or not re.match(r"^[\w'\"`(<{]", title):
        return 0
    return _UNDERLINE[line[0]]


class _Reader:
    def __init__(self, lines: list[str]):
        self.lines = lines
        self.attributes = dict(BUILTIN_ATTRIBUTES)
        self.title = ""
        self.out = SectionBuilder()
        self.style = ""  # the [verse], [source] ... line just read
        self.anchor: str | None = None
        self.lead = ""  # a ".Block title" waiting to lead the next block

    def text(self, text: str) -> str:
        return inline(text, self.attributes)

    def paragraph(self, lines: list[str]) -> None:
        if self.style == "verse":  # a synopsis: its lines kept, its markup read
            self.code("\n".join(inline(ln.rstrip(), self.attributes, lines=True) for ln in lines))
            return
        if lines and lines[0][:1] in (" ", "\t"):
            self.code("\n".join(ln.rstrip() for ln in lines))  # a literal paragraph
            return
        text = self.text(" ".join(ln.strip() for ln in lines))
        admonition = _ADMONITION.match(text)
        if admonition:
            text = f"{admonition.group(1).title()}: {admonition.group(2)}"
        self.emit(text)

    def emit(self, text: str) -> None:
        if self.lead:
            text, self.lead = f"{self.lead}: {text}", ""
        self.out.text(text)

    def code(self, text: str) -> None:
        if self.lead:
            self.out.text(self.lead + ":")
            self.lead = ""
        self.out.code(re.sub(r"\{litdd\}", "--", text))

    def heading(self, level: int, title: str) -> None:
        title = self.text(title)
        if level == 1 and not self.title:
            self.title = self.out.doc_title = title
        self.out.heading(level, title, self.anchor)
        self.anchor, self.style = None, ""


def _delimited(lines: list[str], i: int, fence: str) -> tuple[list[str], int]:
    """The lines of the block opened at ``i`` by ``fence`` and the index after its end."""
    body: list[str] = []
    j = i + 1
    while j < len(lines) and lines[j].rstrip() != fence:
        body.append(lines[j])
        j += 1
    return body, j + 1


def _table(body: list[str]) -> list[str]:
    """``|===`` table rows as "cell | cell" lines (one row per line of cells)."""
    rows = []
    for line in body:
        cells = [c.strip() for c in line.split("|")[1:]] if line.startswith("|") else []
        if any(cells):
            rows.append(" | ".join(c for c in cells if c))
    return rows


def parse_asciidoc(text: str, path: Path) -> ParsedDocument:
    """Parse AsciiDoc into sections; labelled list entries are records of term + description."""
    lines = text.replace("\r\n", "\n").replace("\t", "        ").split("\n")
    r = _Reader(lines)
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
        level = _underline(line, nxt) if not _DELIMITED.match(line) else 0
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
        if block_title and not _ITEM.match(line):
            r.lead = r.text(block_title.group(1))
            i += 1
            continue
        fence = _DELIMITED.match(line)
        if fence:
            body, i = _delimited(lines, i, line)
            kind = fence.group(1)
            if kind.startswith("|"):
                for row in _table(body):
                    r.out.text(r.text(row), row=True)
            elif kind[0] in _CODE_DELIMS and kind != "--" or r.style in ("source", "listing"):
                r.code("\n".join(body))
            elif kind[0] not in "/+":  # example, sidebar, quote, open: read what is inside
                _read_inner(r, body)
            r.style = ""
            continue
        label = _LABEL.match(line)
        if label and not line.startswith((" ", "\t")) and not _ITEM.match(line):
            i = _labelled(r, lines, i)
            continue
        item = _ITEM.match(line)
        if item:
            para = [item.group(2)]
            i += 1
            while i < n and lines[i].strip() and not _ITEM.match(lines[i]) and lines[i] != "+":
                para.append(lines[i].strip())
                i += 1
            r.emit("- " + r.text(" ".join(para)))
            continue
        para = []
        while i < n and lines[i].strip() and lines[i].rstrip() != "+":
            if para and (_DELIMITED.match(lines[i].rstrip()) or _BLOCK_ATTRS.match(lines[i])):
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


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _read_inner(r: _Reader, body: list[str]) -> None:
    """The paragraphs of an example/sidebar/quote block, each as prose."""
    para: list[str] = []
    for line in [*body, ""]:
        if line.strip():
            para.append(line)
        elif para:
            r.paragraph(para)
            para = []


def _labelled(r: _Reader, lines: list[str], i: int) -> int:
    """A labelled list entry at ``i`` (``-q::`` ``--quiet::`` then its description and any
    ``+``-attached blocks), as one record; returns the index after it."""
    terms: list[str] = []
    first_text = ""
    while i < len(lines):
        label = _LABEL.match(lines[i].rstrip())
        if not label or lines[i].startswith((" ", "\t")):
            break
        terms.append(r.text(label.group(1)))
        i += 1
        if label.group(3):
            first_text = label.group(3)
            break
    n = len(lines)
    j = i
    while not first_text and j < n and not lines[j].strip():
        j += 1
    if j < n and lines[j][:1] in (" ", "\t"):  # a description after blank lines, indented
        i = j
    indent = _indent(lines[i]) if i < n and not first_text else 0
    with r.out.record():
        para = [first_text] if first_text else []
        while i < n and lines[i].strip() and lines[i].strip() != "+":
            if _LABEL.match(lines[i].rstrip()) and not lines[i].startswith((" ", "\t")):
                break
            para.append(lines[i].strip())
            i += 1
        lead = ", ".join(terms)
        if para:
            r.out.text(f"{lead}: {r.text(' '.join(para))}")
        else:
            r.out.text(lead)
        while indent:  # more indented paragraphs of the description; deeper ones are code
            j = i
            while j < n and not lines[j].strip():
                j += 1
            if j >= n or _indent(lines[j]) < indent or j == i:
                break
            block = []
            while j < n and lines[j].strip() and _indent(lines[j]) >= indent:
                block.append(lines[j])
                j += 1
            if _indent(block[0]) > indent:
                r.code("\n".join(ln[indent:] for ln in block))
            else:
                r.out.text(r.text(" ".join(ln.strip() for ln in block)))
            i = j
        while i + 1 < len(lines) and lines[i].strip() == "+":  # attached blocks
            i += 1
            fence = _DELIMITED.match(lines[i].rstrip())
            if fence:
                body, i = _delimited(lines, i, lines[i].rstrip())
                if fence.group(1)[0] in _CODE_DELIMS:
                    r.code("\n".join(body))
                else:
                    _read_inner(r, body)
                continue
            para = []
            while i < len(lines) and lines[i].strip() and lines[i].strip() != "+":
                para.append(lines[i])
                i += 1
            r.paragraph(para)
    return i
