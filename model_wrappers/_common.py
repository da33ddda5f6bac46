"""Helpers shared by wrappers (no wrapper imports another)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.records import Turn


def scratch_wav(prefix: str = "reply") -> Path:
    """A fresh wav path in the scratch folder (``STYLEBENCH_SCRATCH`` or the system temp dir)."""
    root = (
        Path(os.environ.get("STYLEBENCH_SCRATCH") or tempfile.gettempdir()) / "stylebench-scratch"
    )
    root.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=prefix + "-", suffix=".wav", dir=root)
    os.close(fd)
    return Path(name)


def script_of(turn: Turn) -> dict[str, Any]:
    """The dialogue script the runner attaches to user turns.

    Only the embedded calibration models read it (an oracle must know what it is asked to
    say); real model wrappers never do.
    """
    script = turn.raw.get("script")
    if not isinstance(script, dict):
        raise ValueError(
            "this embedded model needs the dialogue script on the user turn (raw['script']); "
            "it can only run inside `stylebench run`"
        )
    return script


def seeded_rng(*parts: Any) -> np.random.Generator:
    """A generator seeded by a stable hash of ``parts`` (not Python's salted ``hash``)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def assistant_turns(history: list[Turn] | tuple[Turn, ...]) -> list[Turn]:
    return [t for t in history if t.role == "assistant"]
