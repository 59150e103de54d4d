"""AsciiDoc blocks: inline markup, the reader's state, delimited blocks and labelled lists.

Split from ``asciidoc`` (the line loop) to keep each module small; see that module.
"""

from __future__ import annotations

import re

from ragloop.documents.model import SectionBuilder, clean_text

DELIMITED = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|/{4,}|\+{4,}|--|\|={3,})\s*$")
CODE_DELIMS = ("-", ".")
LABEL = re.compile(r"^\s*(\S.*?)(:{2,4}|;;)(?:\s+(.*))?$")
_ADMONITION = re.compile(r"^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s+(.*)$")
_MACRO = re.compile(
    r"\b(?:linkgit|link|xref|mailto|https?|ftp|file|image|footnote):(\S*?)\[([^\]]*)\]"
)
ITEM = re.compile(r"^\s*([*\-]{1,5}|\.{1,5}|\d+\.|[a-z]\.)\s+(\S.*)$")
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


class Reader:
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


def delimited(lines: list[str], i: int, fence: str) -> tuple[list[str], int]:
    """The lines of the block opened at ``i`` by ``fence`` and the index after its end."""
    body: list[str] = []
    j = i + 1
    while j < len(lines) and lines[j].rstrip() != fence:
        body.append(lines[j])
        j += 1
    return body, j + 1


def table_rows(body: list[str]) -> list[str]:
    """``|===`` table rows as "cell | cell" lines (one row per line of cells)."""
    rows = []
    for line in body:
        cells = [c.strip() for c in line.split("|")[1:]] if line.startswith("|") else []
        if any(cells):
            rows.append(" | ".join(c for c in cells if c))
    return rows


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def read_inner(r: Reader, body: list[str]) -> None:
    """The paragraphs of an example/sidebar/quote block, each as prose."""
    para: list[str] = []
    for line in [*body, ""]:
        if line.strip():
            para.append(line)
        elif para:
            r.paragraph(para)
            para = []


def labelled(r: Reader, lines: list[str], i: int) -> int:
    """A labelled list entry at ``i`` (``-q::`` ``--quiet::`` then its description and any
    ``+``-attached blocks), as one record; returns the index after it."""
    terms: list[str] = []
    first_text = ""
    while i < len(lines):
        label = LABEL.match(lines[i].rstrip())
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
            if LABEL.match(lines[i].rstrip()) and not lines[i].startswith((" ", "\t")):
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
            fence = DELIMITED.match(lines[i].rstrip())
            if fence:
                body, i = delimited(lines, i, lines[i].rstrip())
                if fence.group(1)[0] in CODE_DELIMS:
                    r.code("\n".join(body))
                else:
                    read_inner(r, body)
                continue
            para = []
            while i < len(lines) and lines[i].strip() and lines[i].strip() != "+":
                para.append(lines[i])
                i += 1
            r.paragraph(para)
    return i
