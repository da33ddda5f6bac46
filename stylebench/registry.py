"""Registries of lazy ``"module:Class"`` names, one explicit dict per layer.

Nothing is imported until a name is looked up, so ``import stylebench`` stays light and a model's
heavy dependencies load only when that model is asked for.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from stylebench.errors import BadValue, MissingExtra, UnknownName

_Init = TypeVar("_Init", bound=Callable[..., None])


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


def accepted_arguments(target: Any) -> tuple[str, ...] | None:
    """The keyword arguments ``target`` (a class or function) takes; ``None`` when it takes any
    (``**kwargs``) or has no signature to read."""
    import inspect

    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(n for n, p in params.items() if p.kind in kinds)


def refuses_others(init: _Init) -> _Init:
    """Decorate an ``__init__(..., **kwargs)`` whose ``**kwargs`` is there only to refuse any
    other option in its own words when the class is built directly: the signature
    :func:`accepted_arguments` reads leaves ``**kwargs`` out, so the command line refuses those
    options before any work, naming the flag (:func:`check_arguments`)."""
    import inspect

    sig = inspect.signature(init)
    kept = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    init.__signature__ = sig.replace(parameters=kept)  # type: ignore[attr-defined]
    return init


def check_arguments(
    target: Any,
    names: Iterable[str],
    *,
    what: str,
    flag: str,
    own_flags: Mapping[str, str] | None = None,
    internal: Collection[str] = (),
) -> None:
    """Refuse, before ``target`` is built, every argument name it does not take.

    The one check behind ``--model-arg``, ``--synth-arg``, ``--judge-arg`` and the captioners'
    options: a user's ``KEY=VALUE`` that the class does not take is a :class:`BadValue` naming
    the flag, the name and the arguments it does take, never a ``TypeError`` from inside it.

    Args:
        target: the class (or function) the arguments go to.
        names: the argument names the user gave.
        what: who takes them, as the message names it (``"piper"``, ``"the 'openai' judge"``).
        flag: the repeatable flag that carries them (``"--synth-arg"``).
        own_flags: arguments that come from a flag of their own (``{"model": "--judge-model"}``),
            named by that flag when refused and left out of the accepted list.
        internal: arguments the program fills in itself (left out of the accepted list).
    """
    taken = accepted_arguments(target)
    if taken is None:
        return
    own = dict(own_flags or {})
    unknown = sorted(set(names) - set(taken))
    for name in unknown:
        if name in own:
            raise BadValue(f"{what} takes no {own[name]}; drop {own[name]}")
    if unknown:
        listed = [n for n in taken if n not in own and n not in internal]
        accepts = ", ".join(listed) or "no arguments"
        raise BadValue(
            f"{flag}: {what} takes no argument {', '.join(map(repr, unknown))}; it accepts: {accepts}"
        )
