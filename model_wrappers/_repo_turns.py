"""Per-turn helpers for the repo-based wrappers: dialogue history, reply audio, stored state.

Kept apart from :mod:`._repo_common` (requirements and revisions); nothing heavy is imported here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.model_wrappers._common import scratch_wav
from stylebench.records import Turn
from stylebench.registry import MissingExtraError


def dialogue_pairs(history: Sequence[Turn]) -> list[tuple[Turn, Turn]]:
    """Earlier turns as (user, assistant) pairs; ValueError unless they alternate from a user."""
    if len(history) % 2:
        raise ValueError(f"history must alternate user/assistant turns, got {len(history)} turns")
    pairs = []
    for i in range(0, len(history), 2):
        user, reply = history[i], history[i + 1]
        if user.role != "user" or reply.role != "assistant":
            raise ValueError(
                f"history turns {i}, {i + 1} are {user.role}/{reply.role}; expected user/assistant"
            )
        if not user.audio or not reply.audio:
            raise ValueError(f"history pair {i // 2 + 1} lacks an audio file")
        pairs.append((user, reply))
    return pairs


def audio_of(turn: Turn) -> str:
    """The wav path of a turn, or ValueError."""
    if not turn.audio or not Path(turn.audio).is_file():
        raise ValueError(f"{turn.role} turn has no audio file (audio={turn.audio!r})")
    return turn.audio


def to_mono(wave: Any) -> np.ndarray:
    """A model's waveform (torch tensor or array, any shape) as flat float32 numpy."""
    if hasattr(wave, "detach"):
        wave = wave.detach().cpu().float().numpy()
    return np.asarray(wave, dtype=np.float32).reshape(-1)


def write_reply(wave: Any, sr: int, prefix: str) -> Path:
    """Write a reply waveform to a fresh scratch wav; ValueError when it is empty."""
    from stylebench.audio import write_wav

    mono = to_mono(wave)
    if mono.size == 0:
        raise ValueError(f"{prefix}: the model returned an empty waveform")
    path = scratch_wav(prefix)
    write_wav(path, mono, int(sr))
    return path


def file_sha256(path: str | Path) -> str:
    from stylebench.audio import sha256_file

    return sha256_file(path)


def has_han(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph (used to pick a zh speaker prompt)."""
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def drain(gen: Iterator[Any]) -> tuple[list[Any], Any]:
    """Run a generator to the end: the items it yielded and the value it returned."""
    items = []
    while True:
        try:
            items.append(next(gen))
        except StopIteration as stop:
            return items, stop.value


def strings_in_source(path: Path, pick: Callable[[ast.AST], str | None]) -> list[str]:
    """String constants chosen by ``pick`` from a Python file, read without executing it.

    Some models need the exact system prompt they were trained with; it lives inside the
    official demo script (not an importable constant), so it is read from the user's checkout
    at run time rather than copied into stylebench.
    """
    if not path.is_file():
        raise MissingExtraError(f"{path} not found: pass --model-arg repo=/path/to/the/checkout")
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [s for node in ast.walk(tree) if (s := pick(node)) is not None]


def constant_str(node: ast.AST | None) -> str | None:
    """The value of a string constant node (adjacent literals are already joined), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


class StateCache:
    """Dialogue state kept in memory between turns, keyed by the sha256 of the last reply wav.

    For models whose official multi-turn path keeps internal state (a KV cache) rather than
    re-reading earlier turns. The runner copies each reply byte for byte, so the reply's sha256
    names the state it ended in. Only the most recent ``size`` states are kept (GPU memory).
    """

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self._states: dict[str, Any] = {}

    def put(self, reply_wav: Path | str, state: Any) -> None:
        self._states[file_sha256(reply_wav)] = state
        while len(self._states) > self.size:
            self._states.pop(next(iter(self._states)))

    def get(self, reply_wav: str) -> Any | None:
        return self._states.get(file_sha256(reply_wav))
