"""Test-only wrappers for the worker tests. Never registered; loaded as ``module:Class`` by a
worker whose PYTHONPATH includes this folder.

``EchoModel`` is a NAMED STAND-IN for a real model (a plain ``SpeechModel``: it never sees the
dialogue's answer key): it reads the user's request text back in an espeak-ng voice, one pitch
step higher per earlier reply, so its replies are deterministic and follow pitch "intensify"
requests. ``FlakyEcho`` answers exactly like it but prints to stdout (from Python and straight
to fd 1) on every call, and on its ``at_call``-th call in a process it crashes (``os._exit``),
hangs (sleeps) or raises, once per ``flag`` file, so that the restarted worker behaves again.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.audio import write_wav
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import scratch_wav
from stylebench.model_wrappers.weights import require_package
from stylebench.records import DecodeConfig, Turn
from stylebench.synth.base import Style
from stylebench.synth.espeak import VOICES, EspeakSynth

PITCH_STEP = 2.0  # semitones per earlier reply: well above the 1-semitone pitch threshold


class EchoModel(SpeechModel):
    """Stand-in for a real model: speaks the request text back, one pitch step up per turn."""

    name = "echo-standin"

    def __init__(self) -> None:
        self.synth = EspeakSynth()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "tts": self.synth.version(), "pitch_step": PITCH_STEP}

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return {"echo_temperature": decode.temperature, "pid": os.getpid()}

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        steps = sum(1 for t in history if t.role == "assistant")
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in user_turn.text)
        style = Style(pitch_st=PITCH_STEP * steps)
        audio = self.synth.synthesize(user_turn.text, VOICES["zh-f1" if zh else "en-f1"], style)
        path = scratch_wav(self.name)
        write_wav(path, audio.wave, audio.sr)
        return Turn(
            "assistant", user_turn.text, str(path), audio.sr, raw={"pitch_st": style.pitch_st}
        )


class FlakyEcho(EchoModel):
    """``EchoModel`` with noisy stdout and one scripted failure."""

    def __init__(self, mode: str = "", at_call: str = "0", flag: str = "", once: str = "") -> None:
        if once:  # only the first process may load: every restart dies while loading
            if Path(once).exists():
                os._exit(4)
            Path(once).write_text("loaded")
        super().__init__()
        if mode not in ("", "crash", "hang", "raise"):
            raise ValueError(f"mode must be crash, hang or raise, got {mode!r}")
        self.mode, self.at_call, self.flag = mode, int(at_call), flag
        self.calls = 0

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


class NeedsMissingPackage(EchoModel):
    """Stand-in for a wrapper whose package is absent: fails the way real wrappers do."""

    def __init__(self) -> None:
        require_package(
            "sbtest_absent_pkg", "see docs/models.md#kimi-audio (pip install sbtest-absent-pkg)"
        )
        super().__init__()
