"""The Sphinx directives docutils lacks, as docutils directives that keep their text.

Object descriptions (``.. function:: dumps(obj)``) become ``desc`` nodes that the walker turns
into sections named after the object; version notes and "see also" become prose; code
directives become literal blocks; navigation-only directives produce nothing.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import Directive, directives

from ragloop.documents.model import words

# the Python objects a ``.. module::`` qualifies (``dumps`` in module json is ``json.dumps``)
PY_OBJECTS = words(
    "function class method classmethod staticmethod attribute data exception decorator "
    "decoratormethod property coroutinefunction coroutinemethod abstractmethod awaitablefunction "
    "awaitablemethod type"
)
SHOWN_OPTIONS = ("type", "default")  # ``.. confval:: x`` with ``:type:`` and ``:default:``
CLASSLIKE = frozenset({"class", "exception", "struct", "union", "enum", "namespace"})
PARSE_CONTENT = words("only ifconfig glossary hlist centered")
VERSION = {
    "versionadded": "Added in version {}",
    "versionchanged": "Changed in version {}",
    "deprecated": "Deprecated since version {}",
    "deprecated-removed": "Deprecated since version {}, removed in version {}",
    "versionremoved": "Removed in version {}",
}
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
        if domain == "py" and kind in PY_OBJECTS:
            prefix = ".".join(p for p in [py["module"], *py["classes"]] if p)
            if prefix and not name.startswith(prefix + ".") and not name.startswith(py["module"]):
                name = f"{prefix}.{name}"
        node = desc(self.block_text, name=name, signatures=sigs)
        for option in SHOWN_OPTIONS:
            if self.options.get(option):
                lead = f"{option.capitalize()}: "
                node += nodes.paragraph(
                    "", lead, *self.state.inline_text(self.options[option], self.lineno)[0]
                )
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
