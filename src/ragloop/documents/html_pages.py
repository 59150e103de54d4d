"""Which generator wrote an HTML page, where it keeps the page's title and its content.

Documentation generators each put a page's identity somewhere else: asciidoc's man pages
keep the ``<h1>`` and the NAME line in ``div#header`` apart from ``div#content``; Javadoc
and Doxygen keep the title in a header block; rustdoc's ``<h1>`` carries buttons and
"source" links. A ``Profile`` names, per generator, where the title is, which element is
the content, what identity block to read before it and what page furniture to remove.
A page no profile fits gets its content by text density: the deepest container that
holds most of the page's text outside links (the idea readability-style extractors use,
without their news-article rules that drop short blocks, code and tables).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree


@dataclass(frozen=True)
class Profile:
    """Where one generator keeps a page's parts (XPath expressions, first match wins)."""

    title: tuple[str, ...] = ()
    content: tuple[str, ...] = ()
    #: identity blocks outside the content read before it (asciidoc's NAME section)
    prelude: tuple[str, ...] = ()
    #: furniture removed before reading (buttons, "source" links, tables of contents)
    drop: tuple[str, ...] = ()


def _cls(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


PROFILES: dict[str, Profile] = {
    "asciidoc": Profile(
        title=("//div[@id='header']/h1",),
        content=("//div[@id='content']",),
        prelude=("//div[@id='header']",),
        drop=("//div[@id='toc']", "//div[@id='footer']", "//div[@id='footnotes'][not(*[2])]"),
    ),
    "javadoc": Profile(
        title=(
            f"//div[{_cls('header')}]//*[self::h1 or self::h2][{_cls('title')}]",
            "//main//h1",
        ),
        content=("//main", f"//div[{_cls('contentContainer')}]"),
        drop=(f"//div[{_cls('subNav')}]", f"//div[{_cls('topNav')}]", "//noscript"),
    ),
    "doxygen": Profile(
        title=(f"//div[{_cls('headertitle')}]//div[{_cls('title')}]",),
        content=(f"//div[{_cls('contents')}]",),
        drop=(
            "//div[@id='top']",
            "//div[@id='nav-path']",
            f"//div[{_cls('navpath')}]",
            f"//div[{_cls('summary')}]",
            f"//address[{_cls('footer')}]",
            f"//span[{_cls('mlabels')}]",
        ),
    ),
    "rustdoc": Profile(
        title=(f"//div[{_cls('main-heading')}]/h1", f"//h1[{_cls('fqn')}]"),
        content=("//section[@id='main-content']", "//main"),
        drop=(
            f"//*[{_cls('out-of-band')}]",
            f"//*[{_cls('rightside')}]",
            f"//*[{_cls('srclink')}]",
            f"//*[{_cls('anchor')}]",
            "//button",
        ),
    ),
    "mdbook": Profile(content=("//main",)),
    "mkdocs": Profile(
        content=(f"//div[{_cls('md-content')}]//article", "//div[@role='main']", "//main")
    ),
    "docusaurus": Profile(
        title=("//article//header//h1", "//article//h1"),
        content=(f"//article//div[{_cls('markdown')}]", "//article"),
    ),
    "texinfo": Profile(
        title=(f"//h1[{_cls('settitle')}]",),
        drop=(
            f"//div[{_cls('nav-panel')}]",
            f"//div[{_cls('header')}]",
            f"//div[{_cls('contents')}]",
            f"//div[{_cls('shortcontents')}]",
            f"//div[{_cls('region-contents')}]",
            f"//table[{_cls('menu')}]",
            f"//ul[{_cls('mini-toc')}]",
            f"//ul[{_cls('section-toc')}]",
            f"//ul[{_cls('toc-numbered-mark')}]",
        ),
    ),
    "docbook": Profile(content=("//body",)),
    "sphinx": Profile(),
}

# (generator, what its meta generator tag or a leading comment says)
_SIGNS = (
    ("asciidoc", "asciidoc"),
    ("docbook", "docbook"),
    ("rustdoc", "rustdoc"),
    ("mkdocs", "mkdocs"),
    ("docusaurus", "docusaurus"),
    ("doxygen", "doxygen"),
    ("javadoc", "javadoc"),
    ("texinfo", "makeinfo"),
    ("texinfo", "texi2any"),
    ("texinfo", "texi2html"),
    ("mdbook", "mdbook"),
    ("sphinx", "sphinx"),
)


def detect(doc: etree._Element) -> str:
    """The generator that wrote the page ("asciidoc", "sphinx", ...), "html" when unknown."""
    meta = " ".join(
        doc.xpath("//meta[translate(@name, 'GENERATOR', 'generator')='generator']/@content")
    ).lower()
    comments = " ".join(str(c.text or "")[:200] for c in doc.xpath("//comment()")[:30]).lower()
    for name, sign in _SIGNS:
        if sign in meta or sign in comments:
            return name
    if doc.xpath("//script[contains(@src, 'documentation_options.js')]"):
        return "sphinx"
    if doc.xpath("//*[@id='mkdocs_search_modal' or @id='mkdocs-search-query']"):
        return "mkdocs"
    if doc.xpath("//*[@id='mdbook-help-container' or @id='mdbook-sidebar-toggle']"):
        return "mdbook"
    if doc.xpath("//div[contains(@class, 'refnamediv') or contains(@class, 'navheader')]"):
        return "docbook"
    return "html"


def first(doc: etree._Element, xpaths: tuple[str, ...]) -> etree._Element | None:
    """The first element the first matching XPath finds."""
    for xpath in xpaths:
        found = doc.xpath(xpath)
        if found:
            return found[0]
    return None


_CONTAINERS = {"div", "section", "article", "main", "table", "tbody", "tr", "td", "center"}
_NO_TEXT = {"script", "style", "noscript", "template", "nav", "a", "button", "select"}
DENSE_SHARE = 0.75
DENSE_MIN = 500  # characters: a shorter page is read whole


def densest(body: etree._Element) -> etree._Element:
    """The deepest container holding ``DENSE_SHARE`` of the page's text outside links and
    navigation, and every <h1>/<h2> of the block above it (no title is left behind). A page
    of sibling sections keeps the body (none of them holds that much); a page of under
    ``DENSE_MIN`` characters is read whole."""
    size: dict[etree._Element, int] = {}
    heads: dict[etree._Element, int] = {}  # h1/h2 inside: a title is never left behind
    for el in reversed(list(body.iter())):
        if not isinstance(el.tag, str) or el.tag in _NO_TEXT:
            size[el] = heads[el] = 0
            continue
        own = len((el.text or "").strip())
        for child in el:
            own += size.get(child, 0) + len((child.tail or "").strip())
        size[el] = own
        heads[el] = (el.tag in ("h1", "h2")) + sum(heads.get(c, 0) for c in el)
    total = size.get(body, 0)
    node = body
    while total >= DENSE_MIN:
        child = next(
            (
                c
                for c in node
                if isinstance(c.tag, str)
                and c.tag in _CONTAINERS
                and size.get(c, 0) >= DENSE_SHARE * total
                and heads.get(c, 0) == heads[node]
            ),
            None,
        )
        if child is None:
            break
        node = child
    return node
