"""Optional parts of ragloop (its extras) and the message saying how to install one."""

from __future__ import annotations

import importlib
from types import ModuleType

from ragloop.errors import ProviderError

#: extra name -> (module imported, package installed, what needs it)
EXTRAS = {
    "web": ("tavily", "tavily-python", "web search through Tavily (RAGLOOP_WEB=tavily)"),
    "report": ("matplotlib", "matplotlib", "the charts of an experiment's report.html"),
    "pandas": ("pandas", "pandas", "EvaluationResult.to_pandas()"),
    "ragas": ("ragas", "ragas", "comparing ragloop's metrics with RAGAS's own"),
}


class MissingExtraError(ProviderError, ImportError):
    """An optional package is not installed; the message names the extra that brings it."""


def missing_message(extra: str) -> str:
    """One line saying what needs the extra and how to install it."""
    _, package, what = EXTRAS[extra]
    return f"{what} needs the optional package {package}: pip install 'ragloop[{extra}]'"


def require(extra: str) -> ModuleType:
    """The module an extra provides, or ``MissingExtraError`` saying how to install it."""
    module = EXTRAS[extra][0]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(missing_message(extra)) from None


def has(extra: str) -> bool:
    """Whether the extra's module imports."""
    try:
        require(extra)
    except MissingExtraError:
        return False
    return True
