"""Helpers every real wrapper shares: scratch wavs, reply wavs, dialogue turns, seeding.

No wrapper imports another; what two wrappers both need lives here (or, for what is about
finding packages and weights, in :mod:`.weights`). Nothing heavy is imported at module level.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.records import Turn

#: What a model hears of its own earlier replies on turns 2 and 3 (``describe()["history_kind"]``,
#: in the manifest and the report): it changes what "multi-turn" means across models.
HISTORY_OWN_AUDIO = "own audio + text"  # its reply audio (or audio tokens) and their text
HISTORY_TEXT = "text only"  # its replies as text; user turns still heard as audio
HISTORY_NONE = "none (single-turn)"  # each turn answered from its own audio alone
#: its reply audio and text, in a form the model was not trained on (an opt-in probe)
HISTORY_OWN_AUDIO_UNTRAINED = "own audio + text (untrained form)"
HISTORY_KINDS = (HISTORY_OWN_AUDIO, HISTORY_TEXT, HISTORY_NONE, HISTORY_OWN_AUDIO_UNTRAINED)

#: ``Turn.raw`` key, True when the model's generation stopped at its token budget before it
#: ended the reply (the reply is cut off); False when it ended on its own; None when the
#: wrapper could not tell. One name for every wrapper that can tell, so a report can count it.
RAW_TRUNCATED = "truncated_at_token_budget"


def scratch_wav(prefix: str = "reply") -> Path:
    """A fresh wav path in the scratch folder (``STYLEBENCH_SCRATCH`` or the system temp dir)."""
    root = (
        Path(os.environ.get("STYLEBENCH_SCRATCH") or tempfile.gettempdir()) / "stylebench-scratch"
    )
    root.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=prefix + "-", suffix=".wav", dir=root)
    os.close(fd)
    return Path(name)


def to_mono(wave: Any) -> np.ndarray:
    """A model's waveform (torch tensor or array, any shape) as flat float32 numpy."""
    if hasattr(wave, "detach"):
        wave = wave.detach().to("cpu").float().numpy()
    return np.asarray(wave, dtype=np.float32).reshape(-1)


def write_reply(wave: Any, sr: int, prefix: str) -> tuple[Path, dict[str, Any]]:
    """Write a reply waveform to a fresh scratch wav (never rescaled: loudness is measured).

    Returns:
        The wav path and what it holds: ``audio_s``, ``peak``, ``clipped_fraction``.

    Raises:
        RuntimeError: the model returned no samples, or non-finite ones.
    """
    from stylebench.audio import write_wav

    mono = to_mono(wave)
    if mono.size == 0:
        raise RuntimeError(f"{prefix}: the model returned no audio samples")
    bad = int(np.sum(~np.isfinite(mono)))
    if bad:
        raise RuntimeError(f"{prefix}: the model returned {bad} non-finite audio samples")
    path = scratch_wav(prefix)
    write_wav(path, mono, int(sr))
    stats = {
        "audio_s": round(mono.size / sr, 3),
        "peak": round(float(np.max(np.abs(mono))), 4),
        "clipped_fraction": round(float(np.mean(np.abs(mono) >= 1.0)), 4),
    }
    return path, stats


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


def seed_all(seed: int) -> None:
    """Seed Python, numpy and torch (all devices) so sampling is reproducible per turn."""
    import random

    random.seed(seed)
    np.random.seed(seed % (2**32))
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def build_model(cls: type, args: dict[str, str], name: str) -> Any:
    """``cls(**args)``, after checking that ``cls`` takes those arguments
    (:func:`stylebench.registry.check_arguments`, the check every ``--*-arg`` flag shares).

    Raises:
        BadValue: an argument the wrapper does not take, naming the ones it accepts (a
            TypeError raised inside the constructor is the wrapper's own and passes through).
    """
    from stylebench.registry import check_arguments

    check_arguments(cls, args, what=name, flag="--model-arg")
    return cls(**args)
