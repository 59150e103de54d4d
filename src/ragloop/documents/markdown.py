"""Markdown with markdown-it-py (CommonMark + tables): headings give the path, fences stay whole."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ragloop.documents.html import html_fragment_text
from ragloop.documents.model import ParsedDocument, SectionBuilder, clean_text, guess_title

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?\n)(?:---|\.\.\.)\s*\n", re.DOTALL)
_FM_TITLE = re.compile(r"^title:\s*['\"]?(.+?)['\"]?\s*$", re.MULTILINE)
_MYST_ROLE = re.compile(r"\{[\w:.+-]+\}$")
_ROLE_TARGET = re.compile(r"\s*<[^<>]+>$")
_PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def inline_text(token: Token) -> str:
    """The visible text of an inline token: emphasis and links unwrapped, code as its text."""
    parts: list[str] = []
    children = token.children or []
    role = False
    for n, child in enumerate(children):
        if child.type == "text" and n + 1 < len(children) and children[n + 1].type == "code_inline":
            role = bool(_MYST_ROLE.search(child.content))  # {pypi}`truststore`: its text
            parts.append(_MYST_ROLE.sub("", child.content))
            continue
        if child.type == "code_inline" and role:  # {ref}`the guide <target>`: "the guide"
            parts.append(_ROLE_TARGET.sub("", child.content) or child.content)
            role = False
        elif child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)  # the alt text
        elif child.type == "html_inline":
            continue
    return clean_text("".join(parts))


def parse_markdown(text: str, path: Path) -> ParsedDocument:
    """Parse Markdown into sections; YAML front matter gives the title when it has one."""
    title = ""
    front = _FRONT_MATTER.match(text)
    if front:
        found = _FM_TITLE.search(front.group(1))
        title = found.group(1).strip() if found else ""
        text = text[front.end() :]
    tokens = _PARSER.parse(text)
    first_h1 = next(
        (tokens[i + 1] for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h1"),
        None,
    )
    title = title or (inline_text(first_h1) if first_h1 else "") or guess_title(text, path)
    out = SectionBuilder(title)
    marks: list[str] = []  # one entry per open list: "-" or the next number
    pending = ""
    cells: list[str] = []
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "heading_open":
            heading = inline_text(tokens[i + 1])
            out.heading(int(tok.tag[1]), heading, _slug(heading))
        elif kind in {"bullet_list_open", "ordered_list_open"}:
            marks.append(
                "-" if kind == "bullet_list_open" else str(int(tok.attrs.get("start", 1) or 1))
            )
        elif kind in {"bullet_list_close", "ordered_list_close"}:
            marks.pop()
        elif kind == "list_item_open" and marks:
            mark = marks[-1]
            pending = "  " * (len(marks) - 1) + ("- " if mark == "-" else f"{mark}. ")
            if mark != "-":
                marks[-1] = str(int(mark) + 1)
        elif kind == "inline" and tokens[i - 1].type == "paragraph_open":
            out.text(pending + inline_text(tok))
            pending = ""
        elif kind in {"fence", "code_block"}:
            out.code(tok.content)
        elif kind == "html_block":
            out.text(html_fragment_text(tok.content))
        elif kind == "inline" and tokens[i - 1].type in {"th_open", "td_open"}:
            cells.append(inline_text(tok))
        elif kind == "tr_close":
            out.text(" | ".join(c for c in cells if c), row=True)  # as the other readers
            cells = []
    return ParsedDocument(path, title, out.finish())


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.lower()).strip().replace(" ", "-")
