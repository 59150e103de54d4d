"""Targets of the PostgreSQL-docs bench read from the HTML: commands, programs, functions, settings.

Each target is one thing a user can ask about by name, with the passage that defines it
(the first sentence of a command's Description, a function's description cell, a setting's
description paragraph) and short verbatim snippets of that passage used as gold.
"""

from __future__ import annotations

import gzip
import html
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import lxml.html

SNIPPET_MIN, SNIPPET_MAX = 30, 80
_WS = re.compile(r"\s+")
_TAG = re.compile(r"<[^>]+>")
_SENTENCE_END = re.compile(r"(?<=[^\s.]{2})\.(?=\s+[\w(])")  # "e.g." and "9.0" do not end one


@dataclass(frozen=True)
class Target:
    """One named thing on one page, with its defining passage."""

    page: str  # file name, e.g. "sql-createindex.html"
    kind: str  # "command" | "program" | "function" | "setting"
    name: str  # "CREATE INDEX", "to_tsvector", "work_mem"
    purpose: str  # the defining sentence (commands/programs: the one-line purpose)
    snippets: tuple[str, ...]  # candidate gold: verbatim pieces of the defining passage
    passage: str = ""  # the whole defining paragraph
    #: a command's or program's entry line ("CREATE INDEX — define a new index"): it defines
    #: the name as surely as the Description does, and paraphrases are written from it
    entry: str = ""


def read_page(path: Path) -> bytes:
    """The page's bytes; Debian may ship pages gzipped as NAME.html.gz."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def page_name(path: Path) -> str:
    """The page's file name without a .gz suffix (what the corpus folder holds)."""
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def clean(text: str) -> str:
    """Text with markup and entities removed and whitespace collapsed (case kept)."""
    text = html.unescape(_TAG.sub(" ", text)) if "<" in text or "&" in text else text
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def squash(text: str) -> str:
    """Casefolded text without markup, emphasis marks or any whitespace: the matching key."""
    return re.sub(r"[\s`*]+", "", clean(text).casefold())


def text_of(node: lxml.html.HtmlElement | None) -> str:
    """Visible text of an element, whitespace collapsed."""
    return "" if node is None else clean(node.text_content())


def first_sentence(text: str) -> str:
    """The first sentence of a paragraph (a period after a word of 2+ letters, then a space)."""
    parts = _SENTENCE_END.split(text, maxsplit=1)
    first = parts[0].strip()
    return first if first.endswith(".") or len(parts) == 1 else first + "."


def windows(text: str, limit: int = 2) -> list[str]:
    """Up to `limit` consecutive word windows of SNIPPET_MIN..SNIPPET_MAX characters."""
    words, out, cur = text.split(), [], ""
    for word in words:
        if cur and len(cur) + 1 + len(word) > SNIPPET_MAX:
            out.append(cur)
            cur = ""
            if len(out) == limit:
                break
        cur = f"{cur} {word}".strip()
    if cur and len(out) < limit and (len(cur) >= SNIPPET_MIN or not out):
        out.append(cur)
    return [w for w in out if len(w) >= SNIPPET_MIN]


def anchored(label: str, text: str) -> list[str]:
    """One window that runs from the end of a label (signature, term) into its description.

    Used as gold when the description alone also occurs on another page.
    """
    tail = ""
    for word in reversed(label.split()[-4:]):
        if len(tail) + len(word) + 1 > 40:
            break
        tail = f"{word} {tail}".strip()
    got = windows(f"{tail} {text}", limit=1)
    return got if got and len(got[0]) > len(tail) + 15 else []


def parse(path: Path) -> tuple[str, list[Target]]:
    """(clean text of the page, its targets)."""
    tree = lxml.html.fromstring(read_page(path))
    for bad in tree.xpath("//script|//style"):
        bad.drop_tree()
    name = page_name(path)
    text = text_of(tree)
    if name.startswith("functions-"):
        return text, _functions(tree, name)
    if name.startswith("runtime-config-"):
        return text, _settings(tree, name)
    if name.startswith(("sql-", "app-")):
        return text, _command(tree, name)
    return text, []


def _command(tree: lxml.html.HtmlElement, page: str) -> list[Target]:
    head = tree.xpath('//div[@class="refnamediv"]')
    if not head:
        return []
    title = text_of(head[0].find("h2"))
    line = text_of(head[0].find("p"))
    purpose = line.split("—", 1)[1].strip() if "—" in line else ""
    paras = tree.xpath('//div[@class="refsect1"][h2="Description"]/p')
    first = next((text_of(p) for p in paras if len(text_of(p)) >= SNIPPET_MIN), "")
    if not (title and purpose and first):
        return []
    kind = "program" if page.startswith("app-") else "command"
    snippets = windows(first_sentence(first)) or windows(first)
    if not snippets:
        return []
    return [Target(page, kind, title, purpose, tuple(snippets), first, entry=line)]


def _functions(tree: lxml.html.HtmlElement, page: str) -> list[Target]:
    out: list[Target] = []
    seen: set[str] = set()
    for cell in tree.xpath('//td[@class="func_table_entry"]'):
        sig = cell.xpath('./p[@class="func_signature"]')
        desc = cell.xpath('./p[not(@class="func_signature")]')
        names = sig[0].xpath('.//code[@class="function"]') if sig else []
        if not (names and desc):
            continue
        fname = text_of(names[0])
        body = text_of(desc[0])
        if not re.fullmatch(r"[a-z_][a-z0-9_.]*", fname) or fname in seen or len(body) < 20:
            continue
        seen.add(fname)
        head = first_sentence(body)
        snippets = (windows(head) or windows(body)) + anchored(text_of(sig[-1]), head)
        if snippets:
            out.append(Target(page, "function", fname, head, tuple(snippets), body))
    return out


def _settings(tree: lxml.html.HtmlElement, page: str) -> list[Target]:
    out: list[Target] = []
    for term in tree.xpath('//dt[starts-with(@id, "GUC-")]'):
        names = term.xpath('.//code[@class="varname"]')
        dd = term.getnext()
        paras = dd.xpath("./p") if dd is not None and dd.tag == "dd" else []
        if not (names and paras):
            continue
        body, head = text_of(paras[0]), first_sentence(text_of(paras[0]))
        snippets = (windows(head) or windows(body)) + anchored(text_of(term), head)
        if len(body) >= SNIPPET_MIN and snippets:
            sname = text_of(names[0])
            out.append(Target(page, "setting", sname, head, tuple(snippets), body))
    return out
