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
from typing import Any, ClassVar

from docutils import nodes, utils
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.languages import en

from ragloop.documents.model import words

CODE_ROLES = words(
    "func meth class attr mod data exc obj const envvar option program file samp command "
    "makevar macro member var type struct union enum enumerator expr texpr source token "
    "keyword cfunc cdata cmacro ctype cmember function"
)
DESC = words(
    "function class method classmethod staticmethod attribute data exception decorator "
    "decoratormethod property describe object opcode cmdoption option envvar coroutinefunction "
    "coroutinemethod abstractmethod awaitablefunction awaitablemethod type macro member var "
    "struct union enum enumerator typedef concept namespace pdbcommand 2to3fixer directive role"
)
CLASSLIKE = frozenset({"class", "exception", "struct", "union", "enum", "namespace"})
DROP = words(
    "index toctree highlight tabularcolumns sectionauthor moduleauthor codeauthor literalinclude "
    "testsetup testcleanup audit-event audit-event-table autosummary default-domain "
    "currentmodule-end"
)
CODE_DIRECTIVES = words("code-block sourcecode doctest testcode testoutput productionlist")
PARSE_CONTENT = words("only ifconfig glossary hlist centered")
VERSION = {
    "versionadded": "Added in version {}",
    "versionchanged": "Changed in version {}",
    "deprecated": "Deprecated since version {}",
    "deprecated-removed": "Deprecated since version {}, removed in version {}",
    "versionremoved": "Removed in version {}",
}
# names docutils also knows but Sphinx documents mean differently (``.. class:: Foo(x)``)
SPHINX_OVERRIDES = frozenset({"class", "code-block", "sourcecode"})
_ROLE_USE = re.compile(r":([A-Za-z][\w+.-]*(?::[\w+.-]+)?):`")
_DIRECTIVE_USE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w+.:-]*)::", re.MULTILINE)
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)
_SIG_NAME = re.compile(r"([\w.:~]+)\s*\(")


class desc(nodes.Element):  # noqa: N801 (docutils node classes are lower case)
    """An object description (``.. function:: f(x)``): a section named after the object."""


class _AnyOptions(dict):
    """An option_spec that accepts every option (its value is kept as a string)."""

    def __missing__(self, key: str) -> Any:
        return directives.unchanged


def _options() -> dict[str, Any]:
    spec = _AnyOptions()
    spec["class"] = directives.unchanged  # a key so docutils looks for options at all
    return spec


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
    if name.split(":")[-1] in CODE_ROLES:
        return [nodes.literal(rawtext, shown)], []
    return [nodes.Text(shown)], []


def _doc_state(document: nodes.document) -> dict[str, Any]:
    if not hasattr(document, "ragloop_py"):
        document.ragloop_py = {"module": "", "classes": []}
    return document.ragloop_py  # type: ignore[no-any-return]


def _signatures(block_text: str, arguments: list[str]) -> list[str]:
    lines = block_text.split("\n")
    first = lines[0].split("::", 1)[1].strip() if "::" in lines[0] else ""
    sigs = [first] if first else []
    for line in lines[1:]:
        if not line.strip() or line.strip().startswith(":"):
            break
        if sigs and sigs[-1].endswith("\\"):
            sigs[-1] = sigs[-1][:-1].rstrip() + " " + line.strip()
        else:
            sigs.append(line.strip())
    return [s.rstrip("\\ ") for s in sigs if s] or [" ".join(arguments)]


def object_name(signature: str) -> str:
    """The described object's name from its signature: ``dumps(obj, *, ...)`` -> ``dumps``."""
    match = _SIG_NAME.search(signature)
    if match:
        return match.group(1)
    token = signature.split()[0] if signature.split() else signature
    return token.rstrip(":,;")


class Desc(Directive):
    """``.. function::`` and other object descriptions: a named subsection with its signature."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = _options()

    def run(self) -> list[nodes.Node]:
        kind = self.name.split(":")[-1]
        if self.name == "class" and not self.content and "(" not in " ".join(self.arguments):
            return []  # plain docutils ``.. class:: name`` only styles the next element
        sigs = _signatures(self.block_text, self.arguments)
        name = object_name(sigs[0]) if sigs else kind
        if self.name.startswith("rst:"):  # Sphinx documenting reST itself: ``.. x::``, ``:x:``
            name = f"{sigs[0].strip(' .:').split('::')[0]} {kind}" if sigs else kind
        py = _doc_state(self.state.document)
        domain = self.name.split(":")[0] if ":" in self.name else "py"
        if domain == "py" and kind not in {"describe", "object", "option", "cmdoption", "envvar"}:
            prefix = ".".join(p for p in [py["module"], *py["classes"]] if p)
            if prefix and not name.startswith(prefix + ".") and not name.startswith(py["module"]):
                name = f"{prefix}.{name}"
        node = desc(self.block_text, name=name, signatures=sigs)
        nested = kind in CLASSLIKE and domain == "py"
        if nested:
            py["classes"].append(name.rsplit(".", 1)[-1])
        try:
            self.state.nested_parse(self.content, self.content_offset, node)
        finally:
            if nested:
                py["classes"].pop()
        return [node]


class Module(Directive):
    """``.. module:: json``: names the module that later descriptions belong to; no output."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = _options()

    def run(self) -> list[nodes.Node]:
        module = self.arguments[0].strip() if self.arguments else ""
        _doc_state(self.state.document)["module"] = "" if module == "None" else module
        return []


class Drop(Directive):
    """Navigation-only directives (``.. index::``, ``.. toctree::``): nothing to read."""

    optional_arguments = 99
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = _options()

    def run(self) -> list[nodes.Node]:
        return []


class CodeBlock(Drop):
    """``.. code-block:: python`` and doctest-style blocks: the content as one code block."""

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        return [nodes.literal_block(code, code)] if code.strip() else []


class Content(Drop):
    """Directives whose body is ordinary text (and unknown ones): parse the body, keep the args."""

    def run(self) -> list[nodes.Node]:
        box = nodes.container()
        args = " ".join(self.arguments).strip()
        if args and self.name not in PARSE_CONTENT:
            box += nodes.paragraph(args, "", *self.state.inline_text(args, self.lineno)[0])
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


class Version(Content):
    """``.. versionadded:: 3.4`` and friends: a sentence saying so, then the note's text."""

    def run(self) -> list[nodes.Node]:
        template = VERSION[self.name.split(":")[-1]]
        words = " ".join(self.arguments).split(maxsplit=template.count("{}"))
        versions = (words + [""] * 3)[: template.count("{}")]
        lead = template.format(*versions).strip() + (
            ":" if self.content or len(words) > len(versions) else "."
        )
        inline = words[len(versions)] if len(words) > len(versions) else ""
        box = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, box)
        first = box.children[0] if box.children else None
        if isinstance(first, nodes.paragraph) and not inline:
            first.insert(0, nodes.Text(lead + " "))
        else:
            para = nodes.paragraph(lead, lead + (" " if inline else ""))
            if inline:
                para += self.state.inline_text(inline, self.lineno)[0]
            box.insert(0, para)
        return [box]


class SeeAlso(Content):
    """``.. seealso::``: an admonition titled "See also"."""

    def run(self) -> list[nodes.Node]:
        node = nodes.admonition()
        node += nodes.title("See also", "See also")
        if self.arguments:
            args = " ".join(self.arguments)
            node += nodes.paragraph(args, "", *self.state.inline_text(args, self.lineno)[0])
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


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
