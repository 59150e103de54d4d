"""reStructuredText (Sphinx flavoured) with docutils: sections, clean prose, code kept whole."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.core import publish_doctree

from ragloop.documents import rst_directives, rst_sphinx
from ragloop.documents.model import ParsedDocument, SectionBuilder, clean_text, guess_title

SETTINGS = {
    "report_level": 5,  # docutils prints nothing; problems surface as skipped text, not noise
    "halt_level": 5,
    "warning_stream": io.StringIO(),
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,  # keep the top section a section, so it heads the path
    "sectsubtitle_xform": False,
    "input_encoding": "unicode",
    "syntax_highlight": "none",
    "smart_quotes": True,  # as Sphinx shows them: --- is a dash, quotes are typographic
    "_disable_config": True,
}
_ROLE_RAW = re.compile(r":[\w+.:-]+:`(.*?)`_{0,2}|`([^`]*)`_{0,2}|\|([^|]+)\|_{0,2}")
_SKIP = (
    nodes.system_message,
    nodes.comment,
    nodes.target,
    nodes.substitution_definition,
    nodes.raw,
    nodes.image,
    nodes.pending,
    nodes.footnote_reference,
    nodes.citation_reference,
)


def _raw_text(raw: str) -> str:
    """The readable part of markup docutils could not resolve (``:x:`y``` -> ``y``)."""
    cleaned = _ROLE_RAW.sub(lambda m: next(g for g in m.groups() if g is not None), raw)
    return rst_sphinx.role_text("", cleaned) if "<" in cleaned else cleaned.rstrip("_")


def inline_text(node: nodes.Node) -> str:
    """The visible text of an inline subtree, with unresolved markup reduced to its text."""
    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, _SKIP):
        return ""
    if isinstance(node, nodes.problematic):
        return _raw_text(node.astext())
    if isinstance(node, rst_sphinx.label_ref):
        return _label_title(node)
    return "".join(inline_text(child) for child in node.children)


def _label_title(node: rst_sphinx.label_ref) -> str:
    """The title of the section a label names in this document, else the label itself."""
    document = node.document
    ref_id = document.nameids.get(node["label"]) if document is not None else None
    target = document.ids.get(ref_id) if ref_id else None
    if isinstance(target, nodes.section) and target.children:
        return clean_text(inline_text(target[0]))
    return node.astext()


class _Walker:
    def __init__(self, title: str):
        self.out = SectionBuilder(title)

    def walk(self, node: nodes.Node, depth: int, prefix: str = "") -> None:
        if isinstance(node, (*_SKIP, nodes.Text)):
            return
        if isinstance(node, nodes.section):
            title = inline_text(node[0]) if node.children else ""
            ids = node.get("ids") or [None]
            self.out.heading(depth + 1, title, ids[0])
            for child in node.children[1:]:
                self.walk(child, depth + 1)
            self.out.pop_to(depth)
        elif isinstance(node, rst_directives.desc):
            self.out.heading(depth + 1, node["name"], node["name"])
            self.out.code("\n".join(node["signatures"]))
            for child in node.children:
                self.walk(child, depth + 1)
            self.out.pop_to(depth)
        elif isinstance(node, nodes.literal_block | nodes.doctest_block):
            self.out.code(node.astext())
        elif isinstance(node, nodes.topic) and "contents" in node.get("classes", []):
            return
        elif isinstance(node, nodes.Admonition):
            self._admonition(node, depth)
        elif isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            for n, item in enumerate(node.children, start=1):
                mark = f"{n}. " if isinstance(node, nodes.enumerated_list) else "- "
                self._children(item, depth, prefix + mark)
        elif isinstance(node, nodes.definition_list_item | nodes.field | nodes.option_list_item):
            head = clean_text(inline_text(node[0]))
            self._children(node[1] if len(node) > 1 else node, depth, f"{prefix}{head}: ")
        elif isinstance(node, nodes.table):
            self._table(node)
        elif isinstance(node, nodes.line_block):
            self.out.text(prefix + "\n".join(clean_text(inline_text(n)) for n in node.children))
        elif isinstance(node, nodes.TextElement):
            self.out.text(prefix + clean_text(inline_text(node)))
        else:
            self._children(node, depth, prefix)

    def _children(self, node: nodes.Node, depth: int, prefix: str) -> None:
        for n, child in enumerate(node.children):
            self.walk(child, depth, prefix if n == 0 else "")

    def _admonition(self, node: nodes.Element, depth: int) -> None:
        body = list(node.children)
        if body and isinstance(body[0], nodes.title):
            label = clean_text(inline_text(body.pop(0)))
        else:
            label = node.__class__.__name__.capitalize()
        for n, child in enumerate(body):
            self.walk(child, depth, f"{label}: " if n == 0 else "")

    def _table(self, node: nodes.table) -> None:
        rows = [
            " | ".join(c for c in (clean_text(inline_text(e)) for e in row.children) if c)
            for row in node.findall(nodes.row)
        ]
        for row in rows:
            self.out.text(row, row=True)


def parse_rst(text: str, path: Path) -> ParsedDocument:
    """Parse reStructuredText into sections; Sphinx markup is read, not leaked."""
    rst_sphinx.register_for(text)
    settings: dict[str, Any] = dict(SETTINGS, warning_stream=io.StringIO())
    doctree = publish_doctree(text, source_path=str(path), settings_overrides=settings)
    first = next(iter(doctree.findall(nodes.section)), None)
    title = clean_text(inline_text(first[0])) if first is not None else ""
    title = title or guess_title(text, path)
    walker = _Walker("" if first is not None and first.parent is doctree else title)
    for child in doctree.children:
        walker.walk(child, 0)
    return ParsedDocument(path, title, walker.out.finish())
