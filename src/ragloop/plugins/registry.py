"""A named registry filled from Python and from package entry points (one per plug-in kind)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from ragloop.errors import ProviderError, unknown_name

T = TypeVar("T")


class Registry(Generic[T]):
    """Names to objects (or factories building them), looked up case-sensitively.

    Entries registered in Python win over entry points of the same name; entry points of
    ``group`` are listed on first use and imported only when their name is asked for, so a
    broken plug-in package never breaks ``ragloop`` for everyone else.
    """

    def __init__(self, kind: str, group: str):
        self.kind = kind
        self.group = group
        self._entries: dict[str, T] = {}
        self._entry_points: dict[str, EntryPoint] | None = None
        self._lock = threading.Lock()

    def _plugins(self) -> dict[str, EntryPoint]:
        with self._lock:
            if self._entry_points is None:
                self._entry_points = {ep.name: ep for ep in entry_points(group=self.group)}
            return self._entry_points

    def register(self, name: str, entry: T) -> T:
        """Make ``entry`` available under ``name`` (replacing an earlier one of that name)."""
        if not isinstance(name, str) or not name.strip() or ":" in name or "," in name:
            raise ProviderError(
                f"{self.kind} name {name!r} is not usable: give a non-empty name without ':' or ','"
            )
        self._entries[name.strip()] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Forget ``name`` (tests and notebooks re-registering under one name use this)."""
        self._entries.pop(name, None)

    def names(self) -> list[str]:
        """Every known name: registered in Python or advertised by an installed plug-in."""
        return sorted({*self._entries, *self._plugins()})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self._plugins())

    def get(self, name: str) -> T:
        """The entry for ``name``; an unknown name is an error listing the known ones."""
        if name in self._entries:
            return self._entries[name]
        ep = self._plugins().get(name)
        if ep is None:
            raise unknown_name(self.kind, name, self.names())
        try:
            loaded: T = ep.load()
        except Exception as exc:  # a plug-in's import error must say which plug-in
            raise ProviderError(
                f"{self.kind} plug-in '{name}' ({ep.value}, entry point group {self.group}) "
                f"failed to load: {exc}; reinstall or remove the package that provides it"
            ) from exc
        self._entries[name] = loaded
        return loaded


def decorator_or_call(
    registry: Registry[Any], name: str, entry: Any, adapt: Callable[[Any], Any] | None = None
) -> Any:
    """``register_x(name, obj)`` registers at once; ``@register_x(name)`` registers the function."""
    if entry is not None:
        registry.register(name, adapt(entry) if adapt else entry)
        return entry

    def deco(fn: Any) -> Any:
        registry.register(name, adapt(fn) if adapt else fn)
        return fn

    return deco
