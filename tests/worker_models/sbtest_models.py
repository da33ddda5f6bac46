"""Test-only wrappers for the worker tests. Never registered; loaded as ``module:Class`` by a
worker whose PYTHONPATH includes this folder.

``FlakyReference`` is a stand-in for a badly behaved real model: it answers exactly like
``reference`` but prints to stdout (from Python and straight to fd 1) on every call, and on its
``at_call``-th call in a process it crashes (``os._exit``), hangs (sleeps) or raises, once per
``flag`` file, so that the restarted worker behaves again.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from stylebench.model_wrappers.reference import ReferenceModel
from stylebench.records import DecodeConfig, Turn


class FlakyReference(ReferenceModel):
    """``reference`` with noisy stdout and one scripted failure."""

    def __init__(
        self, mode: str = "", at_call: str = "0", flag: str = "", once: str = "", **kw: str
    ) -> None:
        if once:  # only the first process may load: every restart dies while loading
            if Path(once).exists():
                os._exit(4)
            Path(once).write_text("loaded")
        super().__init__(**kw)
        if mode not in ("", "crash", "hang", "raise"):
            raise ValueError(f"mode must be crash, hang or raise, got {mode!r}")
        self.mode, self.at_call, self.flag = mode, int(at_call), flag
        self.calls = 0

    def describe(self) -> dict:
        return {**super().describe(), "name": "reference"}

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        self.calls += 1
        print(f"library chatter on stdout, call {self.calls}")  # must not break the protocol
        sys.stdout.flush()
        os.write(1, b"{not protocol} raw write to fd 1\n")
        if self.mode and self.calls == self.at_call and not Path(self.flag).exists():
            Path(self.flag).write_text(str(os.getpid()))
            print(f"flaky: {self.mode} now", file=sys.stderr, flush=True)
            if self.mode == "crash":
                os._exit(3)
            if self.mode == "hang":
                time.sleep(3600)
            raise RuntimeError("scripted model failure")
        return super().respond(history, user_turn, decode)


class NeedsMissingPackage(ReferenceModel):
    """Stand-in for a wrapper whose package is absent: fails the way real wrappers do."""

    def __init__(self, **kw: str) -> None:
        from stylebench.model_wrappers._common import require_package

        require_package(
            "sbtest_absent_pkg", "see docs/models.md#kimi-audio (pip install sbtest-absent-pkg)"
        )
        super().__init__(**kw)
