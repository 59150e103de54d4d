"""Tolerant handlers for the Sphinx roles and directives plain docutils does not know.

Sphinx documentation is full of ``:func:`x```, ``.. note::``, ``.. function::`` and friends;
docutils alone would print an error and leave the raw markup in the text. These handlers turn
cross-reference roles into their display text, object descriptions into sections named after
the object, version notes and "see also" into prose, and drop what only builds navigation
(``.. index::``, ``.. toctree::``). Any other role or directive found in a file is registered
with a generic handler before parsing, so unknown markup degrades to its text, never to errors.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes, utils
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.languages import en

from ragloop.documents.model import words
from ragloop.documents.rst_directives import (
    VERSION,
    CodeBlock,
    Content,
    Desc,
    Drop,
    Module,
    SeeAlso,
    Version,
)

CODE_ROLES = words(
    "func meth class attr mod data exc obj const envvar option program file samp command "
    "makevar macro member var type struct union enum enumerator expr texpr source token "
    "keyword cfunc cdata cmacro ctype cmember function"
)
DESC = words(
    "function class method classmethod staticmethod attribute data exception decorator "
    "decoratormethod property describe object opcode cmdoption option envvar coroutinefunction "
    "coroutinemethod abstractmethod awaitablefunction awaitablemethod type macro member var "
    "struct union enum enumerator typedef concept namespace pdbcommand 2to3fixer directive role "
    "confval event"
)
DROP = words(
    "index toctree highlight tabularcolumns sectionauthor moduleauthor codeauthor literalinclude "
    "testsetup testcleanup audit-event audit-event-table autosummary default-domain "
    "currentmodule-end"
)
CODE_DIRECTIVES = words("code-block sourcecode doctest testcode testoutput productionlist")
# names docutils also knows but Sphinx documents mean differently (``.. class:: Foo(x)``)
SPHINX_OVERRIDES = frozenset({"class", "code-block", "sourcecode"})
_ROLE_USE = re.compile(r":([A-Za-z][\w+.-]*(?::[\w+.-]+)?):`")
_DIRECTIVE_USE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w+.:-]*)::", re.MULTILINE)
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)


def role_text(name: str, text: str) -> str:
    """What Sphinx would display for ``:name:`text```."""
    text = utils.unescape(text)
    match = _EXPLICIT.match(text)
    if match and match.group(1):
        return match.group(1)
    target = match.group(2) if match else text
    target = target.lstrip("!")
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    if name.split(":")[-1] == "menuselection":
        target = target.replace("-->", "›")
    return target


def _role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options=None, content=None
):
    shown = role_text(name, text)
    if name.split(":")[-1] in {"ref", "numref"} and not _EXPLICIT.match(text):
        return [label_ref(rawtext, shown, label=shown.lower())], []
    if name.split(":")[-1] in CODE_ROLES:
        return [nodes.literal(rawtext, shown)], []
    return [nodes.Text(shown)], []


class label_ref(nodes.Inline, nodes.TextElement):  # noqa: N801 (docutils node naming)
    """``:ref:`label``` without a title: shows the labelled section's title when it is here."""


def _known_role(name: str) -> bool:
    lowered = name.lower()
    return lowered in roles._roles or lowered in roles._role_registry or lowered in en.roles


def _known_directive(name: str) -> bool:
    lowered = name.lower()
    return lowered in directives._directives or lowered in en.directives


def _directive_for(name: str) -> type[Directive]:
    base = name.split(":")[-1]
    if base in VERSION:
        return Version
    if base in {"module", "currentmodule"}:
        return Module
    if base in DESC:
        return Desc
    if base in DROP or base.startswith("auto"):
        return Drop
    if base in CODE_DIRECTIVES:
        return CodeBlock
    if base == "seealso":
        return SeeAlso
    return Content


def register_for(source: str) -> None:
    """Give every role and directive used in ``source`` that docutils lacks a tolerant handler."""
    for name in set(_ROLE_USE.findall(source)):
        if not _known_role(name):
            roles.register_local_role(name.lower(), _role)
    for name in set(_DIRECTIVE_USE.findall(source)):
        if name.lower() in SPHINX_OVERRIDES or not _known_directive(name):
            directives.register_directive(name.lower(), _directive_for(name.lower()))
