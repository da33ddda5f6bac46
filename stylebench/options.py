"""Declaring config options: a field with its command-line metadata, and the checks they share.

Used by :mod:`stylebench.config` and the sub-configs that live in their own modules
(:mod:`stylebench.caption_config`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import field
from typing import Any

from stylebench.errors import BadValue

MEASURE = ("run", "score")


def option(default: Any, help: str, *, commands: tuple[str, ...] = MEASURE, **cli: Any) -> Any:
    """A config field with its command-line metadata.

    Args:
        default: the default value (dicts become a default factory).
        help: the flag's help text.
        commands: the commands that take the flag.
        **cli: ``flag`` (default ``--field-name``), ``choices``, ``metavar``, ``kind``
            (``"kv"`` for repeatable KEY=VALUE dicts, ``"number"`` for a number whose bad
            value is a one-line user error).
    """
    meta = {"help": help, "commands": commands, **cli}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


def check_choice(value: Any, name: str, allowed: tuple[Any, ...]) -> None:
    if value not in allowed:
        raise BadValue(
            f"--{name.replace('_', '-')} must be one of {', '.join(map(str, allowed))}, got {value!r}"
        )


def check_choices(obj: Any) -> None:
    """Every field declared with ``choices`` holds one of them (config files bypass argparse)."""
    for f in dataclasses.fields(obj):
        if "choices" in f.metadata:
            check_choice(getattr(obj, f.name), f.name, f.metadata["choices"])


def check_min(obj: Any, names: tuple[str, ...], low: float = 0.0) -> None:
    for name in names:
        v = getattr(obj, name)
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= low):
            raise BadValue(
                f"--{name.replace('_', '-')} must be a finite number >= {low:g}, got {v!r}"
            )


def check_url(url: str, flag: str) -> str:
    """An OpenAI-compatible base URL a user gave with ``flag``: it starts with http(s)://.

    Checked before any work (the backends check it again when built), so a mistyped URL is one
    line naming the flag, not an error on every request after the model has answered.

    Raises:
        BadValue: any other URL.
    """
    if not url.startswith(("http://", "https://")):
        raise BadValue(f"{flag} must start with http:// or https://, got {url!r}")
    return url
