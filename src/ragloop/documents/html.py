"""HTML with lxml: the page's main content (no navigation), headings h1-h6 give the path."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
from lxml import etree

from ragloop.documents.html_nav import is_navigation
from ragloop.documents.html_pages import PROFILES, Profile, densest, detect, first
from ragloop.documents.model import DocumentError, ParsedDocument, SectionBuilder, clean_text, words

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_MAIN = (
    "//main",
    "//*[@role='main']",
    "//article",
    "//div[contains(concat(' ', normalize-space(@class), ' '), ' body ')]",
    "//div[@id='content']",
)
LONGEST_TITLE = 200
_ADMONITIONS = {"note", "tip", "warning", "caution", "important", "admonition", "seealso"}
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = words(
    "p div li ul ol dl dt dd table tr thead tbody tfoot blockquote section article main "
    "figure figcaption br hr address caption details summary center"
)


def _root(doc: etree._Element, profile: Profile) -> etree._Element:
    """The main content: the generator's container, a known one, else the densest block."""
    found = first(doc, profile.content + _MAIN)
    if found is not None:
        return found
    body = doc.find("body")
    return densest(body) if body is not None else doc


def _agree(heading: str, page_title: str) -> bool:
    """Whether a heading and the page's <title> name the same thing ("Page - Site" agrees)."""
    a, b = (re.sub(r"\W+", " ", t).strip().casefold() for t in (heading, page_title))
    return bool(a and b) and (a in b or b in a)


def _walked(el: etree._Element, root: etree._Element) -> bool:
    """Whether reading ``root`` reaches ``el`` (inside it, under no navigation)."""
    for parent in el.iterancestors():
        if parent is root:
            return True
        if is_navigation(parent):
            return False
    return False


class _Walker:
    def __init__(self, title: str):
        self.out = SectionBuilder(title)
        self.buffer: list[str] = []
        self.prefix = ""
        self.term = ""  # a definition's term, waiting to lead its description ("term: ...")

    def flush(self) -> None:
        text = clean_text("".join(self.buffer))
        self.buffer = []
        if text:
            self.out.text(self.term + self.prefix + text)
            self.prefix = self.term = ""

    def _term_alone(self) -> None:
        """A term whose description does not start with prose keeps a line of its own."""
        if self.term:
            self.out.text(self.term.rstrip(": "))
            self.term = ""

    def walk(self, el: etree._Element) -> None:
        if not isinstance(el.tag, str) or is_navigation(el):
            self.buffer.append(el.tail or "")
            return
        tag = el.tag.lower()
        classes = set((el.get("class") or "").split())
        if tag in _HEADINGS:
            self.flush()
            anchor = el.get("id")
            parent = el.getparent()
            while not anchor and parent is not None and parent.tag in ("div", "section"):
                anchor, parent = parent.get("id"), parent.getparent()
            self.out.heading(_HEADINGS[tag], visible_text(el), anchor)
        elif tag == "pre":
            self.flush()
            self._term_alone()
            self.out.code(el.text_content())
        elif tag == "tr" and not _complex_row(el):
            self.flush()
            cells = [clean_text(visible_text(c)) for c in el if c.tag in ("td", "th")]
            self.out.text(" | ".join(c for c in cells if c), row=True)
        elif tag == "tr":  # read cell by cell, but one record: a signature and what it does
            self.flush()
            with self.out.record():
                for child in el:
                    self.walk(child)
                self.flush()
        elif tag == "div" and classes & _ADMONITIONS:
            self._admonition(el)
        elif tag == "dl" and _described_object(el):
            self._description(el)
        elif tag == "dl":
            self._definitions(el)
        elif tag in _BLOCKS:
            self.flush()
            if tag == "li":
                self.prefix = "- "
            self.buffer.append(el.text or "")
            for child in el:
                self.walk(child)
            self.flush()
        else:  # inline: its text joins the paragraph being collected
            self.buffer.append(el.text or "")
            for child in el:
                self.walk(child)
        self.buffer.append(el.tail or "")

    def _admonition(self, el: etree._Element) -> None:
        """DocBook ``div.note > h3`` or Sphinx ``p.admonition-title``: a "Note: " lead-in."""
        self.flush()
        label = el.find(".//*[@class='admonition-title']")
        if label is None:
            label = next(iter(el.iter(*_HEADINGS)), None)
        if label is not None:
            self.prefix = clean_text(visible_text(label)).rstrip(":") + ": "
            label.drop_tree()
        for child in el:
            self.walk(child)
        self.flush()

    def _definitions(self, el: etree._Element) -> None:
        """A definition list (DocBook variablelist, a glossary, a field list): each term leads
        the first paragraph of its description ("wal_buffers (integer): The amount of ...")
        and the two are one record, so no chunk holds a description without what it is."""
        self.flush()
        terms: list[str] = []
        for child in el:
            if not isinstance(child.tag, str) or is_navigation(child):
                continue
            if child.tag == "dt":
                terms.append(clean_text(visible_text(child)).rstrip(":").strip())
            elif child.tag == "div":  # HTML5 allows <div> groups of dt + dd
                self._definitions(child)
            else:
                with self.out.record():
                    named = [t for t in terms if t]
                    self.term = ", ".join(named) + ": " if named else ""
                    terms = []
                    self.walk(child)
                    self.flush()
                    self._term_alone()
        if any(terms):  # a term with no description
            self.out.text(", ".join(t for t in terms if t))

    def _description(self, el: etree._Element) -> None:
        """Sphinx ``dl.py.function``: a subsection named by the object, its signature as code."""
        self.flush()
        level = (self.out.stack[-1][0] if self.out.stack else 1) + 1
        for child in el:
            if child.tag == "dt" and child.get("id"):
                anchor, signature = child.get("id"), clean_text(visible_text(child))
                name = anchor if _NAME.match(anchor) else signature  # "cmdoption-x-y": its text
                self.out.heading(level, name, anchor)
                self.out.code(signature)
            elif isinstance(child.tag, str):
                for sub in child:
                    self.walk(sub)
                self.buffer.append(child.text or "")
                self.flush()
        self.out.pop_to(level - 1)


def visible_text(el: etree._Element) -> str:
    """The text of an element without navigation inside it (Sphinx's ¶ permalinks)."""
    parts = [el.text or ""]
    for child in el:
        if child.tag == "br":
            parts.append(" ")
        elif isinstance(child.tag, str) and not is_navigation(child):
            parts.append(visible_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _complex_row(tr: etree._Element) -> bool:
    """A row whose cells hold several paragraphs or code: read cell by cell, not as a line."""
    for cell in tr:
        blocks = [c for c in cell if isinstance(c.tag, str) and c.tag in _BLOCKS | {"pre"}]
        if len(blocks) > 1 or any(c.tag in ("pre", "ul", "ol", "table", "dl") for c in blocks):
            return True
    return False


def _described_object(dl: etree._Element) -> bool:
    first = next((c for c in dl if isinstance(c.tag, str)), None)
    return first is not None and first.tag == "dt" and "sig" in (first.get("class") or "").split()


def _document(text: str) -> etree._Element:
    text = _XML_DECL.sub("", text, count=1)
    if not text.strip():
        raise DocumentError("empty file")
    try:
        return lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError) as exc:
        raise DocumentError(f"not readable as HTML ({exc})") from exc


def parse_html(text: str, path: Path) -> ParsedDocument:
    """Parse an HTML page into sections of its main content; <pre> blocks stay whole.

    The title is where the page's generator keeps it (``html_pages.PROFILES``), else the
    content's first heading, else a page ``<h1>`` outside it, else ``<title>``; a title or
    identity block (asciidoc's NAME) outside the content is read first, so the page's first
    section says what it is.
    """
    doc = _document(text)
    generator = detect(doc)
    profile = PROFILES.get(generator, Profile())
    page_title = clean_text(doc.findtext(".//title") or "")
    for xpath in profile.drop:
        for el in doc.xpath(xpath):
            if el.getparent() is not None:
                el.drop_tree()
    root = _root(doc, profile)
    title_el = first(doc, profile.title)
    if title_el is None:
        title_el = next((h for h in root.iter(*_HEADINGS) if not is_navigation(h)), None)
    if title_el is None:
        title_el = next((h for h in doc.iter("h1") if not is_navigation(h)), None)
    heading = clean_text(visible_text(title_el)) if title_el is not None else ""
    if len(heading) > LONGEST_TITLE:  # an unclosed <h1> swallowed the page
        heading, title_el = "", None
    if generator == "html" and heading and page_title and not _agree(heading, page_title):
        heading, title_el = page_title, None  # "1. Syntax" on a page <title>d "CREATE TABLE"
    title = heading or page_title or path.stem
    walker = _Walker(title)
    prelude = first(doc, profile.prelude)
    if prelude is not None and not _walked(prelude, root) and prelude is not root:
        walker.walk(prelude)
        walker.flush()
    elif heading and (title_el is None or not _walked(title_el, root)):
        walker.out.heading(1, heading, title_el.get("id") if title_el is not None else None)
    walker.buffer.append(root.text or "")
    for child in root:
        walker.walk(child)
    walker.flush()
    return ParsedDocument(path, title, walker.out.finish(), generator=generator)


def html_fragment_text(fragment: str) -> str:
    """The visible text of an HTML fragment (raw HTML inside Markdown), one line."""
    if not fragment.strip():
        return ""
    try:
        el = lxml.html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return ""
    for bad in el.xpath(".//script|.//style"):
        bad.drop_tree()
    return clean_text(el.text_content())
