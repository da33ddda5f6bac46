"""Renderings kept per process: a voice's speech before the FFmpeg style, by what made it.

A rendering is a function of its key (the model, its threads, the text, the native rate, the
voice's WORLD shift, the seeded noise draw), so one computed again would be the same samples; the
calibration models say one content at every turn of a dialogue and only the style after the
rendering changes, so most of their replies reuse one. The store is bounded by bytes (least
recently used out first) and hands out copies: a caller that changes its array cannot change the
kept one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

#: bytes of samples one store keeps (about 25 min of 22.05 kHz float32 speech)
MAX_BYTES = 128 * 1024 * 1024


class Renderings:
    """A byte-bounded, thread-safe LRU of rendered waves."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._waves: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> np.ndarray | None:
        """A copy of the kept wave of ``key``, or None."""
        with self._lock:
            wave = self._waves.get(key)
            if wave is None:
                return None
            self._waves.move_to_end(key)
            return wave.copy()

    def put(self, key: Hashable, wave: np.ndarray) -> None:
        """Keep a copy of ``wave`` under ``key``; the least recently used go past the bound."""
        kept = np.array(wave, copy=True)
        with self._lock:
            old = self._waves.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._waves[key] = kept
            self._bytes += kept.nbytes
            while self._bytes > self.max_bytes and len(self._waves) > 1:
                _, out = self._waves.popitem(last=False)
                self._bytes -= out.nbytes

    def clear(self) -> None:
        with self._lock:
            self._waves.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._waves)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._waves
