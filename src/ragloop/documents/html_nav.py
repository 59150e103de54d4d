"""What on an HTML page is navigation, not text: the tags, classes and roles generators give
their menus, sidebars, headers and footers, and the permalink marks beside headings and terms.
``html.py`` skips what ``is_navigation`` names while it reads a page."""

from __future__ import annotations

from lxml import etree

from ragloop.documents.model import words

_DROP_TAGS = words(
    "script style noscript template nav header footer aside form button iframe svg "
    "select input textarea object embed canvas"
)
# navigation that generators put in plain divs: DocBook, Sphinx, MkDocs, Doxygen, javadoc
_DROP_CLASSES = words(
    "navheader navfooter toc sphinxsidebar related footer header headerlink breadcrumb "
    "breadcrumbs sidebar navbar nav navigation skip-link md-sidebar md-header md-footer "
    "wy-nav-side rst-footer-buttons id_link toc-backref toctree-wrapper"
)
_DROP_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary"}

#: what a permalink next to a heading or a term shows (texinfo's "¶", a "#", a link glyph)
_PERMALINK_MARKS = frozenset({"", "\u00b6", "\u00a7", "#", "\U0001f517", "\u200b"})


def is_permalink(el: etree._Element) -> bool:
    """A link to an anchor of its own page that shows only a mark: texinfo's
    ``<a class="copiable-anchor" href="#index-POSIX"> &para;</a>``, a heading's "#"."""
    return (
        el.tag == "a"
        and (el.get("href") or "").startswith("#")
        and len(el) == 0
        and (el.text or "").strip() in _PERMALINK_MARKS
    )


def is_navigation(el: etree._Element) -> bool:
    """A menu, sidebar, header, footer, form or permalink: never read as the page's text."""
    if el.tag in _DROP_TAGS or is_permalink(el):
        return True
    classes = set((el.get("class") or "").split())
    if el.tag == "a" and classes == {"header"}:  # mdBook wraps each heading's text in one
        return False
    return bool(classes & set(_DROP_CLASSES)) or (el.get("role") or "") in _DROP_ROLES
