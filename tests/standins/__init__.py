"""Stand-ins for the official code of the repo-based models, used by tests/test_wrappers_repo.py.

Each folder mirrors the layout of one official repository (module names, functions, signatures)
so that a wrapper imports it exactly as it would import the real checkout. The stand-ins load no
weights: they check the structures the official code expects (message formats, argument names),
record every call in a module-level ``CALLS`` list, and return small known outputs. They are NOT
the models; a test that passes with them shows the wrapper speaks the official interface.
"""

from __future__ import annotations

import numpy as np


def tone(sr: int, seconds: float = 0.5, hz: float = 220.0) -> np.ndarray:
    """A known reply waveform: a sine at ``hz``, amplitude 0.5."""
    t = np.arange(int(sr * seconds)) / sr
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
