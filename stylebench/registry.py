"""Registries of lazy ``"module:Class"`` names, one explicit dict per layer.

Nothing is imported until a name is looked up, so ``import stylebench`` stays light and a model's
heavy dependencies load only when that model is asked for.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from stylebench.errors import MissingExtra, UnknownName


class MissingExtraError(MissingExtra):
    """A heavy optional dependency is not installed; the message is one actionable line."""


class LazyRegistry(Mapping[str, str]):
    """An immutable name -> ``"module:attr"`` map that imports on :meth:`load`."""

    def __init__(self, layer: str, entries: Mapping[str, str]) -> None:
        self.layer = layer
        self._entries = dict(entries)
        for name, target in self._entries.items():
            if ":" not in target:
                raise ValueError(
                    f"{layer} registry: {name!r} must map to 'module:attr', got {target!r}"
                )

    @classmethod
    def from_pairs(cls, layer: str, pairs: list[tuple[str, str]]) -> LazyRegistry:
        seen: dict[str, str] = {}
        for name, target in pairs:
            if name in seen:
                raise ValueError(f"{layer} registry: duplicate name {name!r}")
            seen[name] = target
        return cls(layer, seen)

    def __getitem__(self, name: str) -> str:
        try:
            return self._entries[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._entries), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownName(
                f"unknown {self.layer} {name!r}{hint} (known: {', '.join(sorted(self._entries))})"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def load(self, name: str) -> Any:
        """Import and return the object registered under ``name``."""
        module_name, attr = self[name].split(":", 1)
        module = importlib.import_module(module_name)
        try:
            return getattr(module, attr)
        except AttributeError:
            raise ImportError(
                f"{self.layer} {name!r}: {module_name} has no attribute {attr!r}"
            ) from None
