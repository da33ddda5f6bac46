"""Run a synthesiser in its own Python environment, through the model-worker adapter.

It lives with the model worker, not in :mod:`stylebench.synth`, because it builds on
``SpeechModel`` and ``WorkerModel``: the synthesisers themselves never import the model layer
(docs/architecture.md#layers).

TTS systems such as CosyVoice pin their own dependencies. Rather than a second IPC loop, this
reuses :class:`stylebench.model_wrappers.worker.WorkerModel` (JSON lines, timeouts, stderr
capture, restart after a crash): inside the worker, :class:`SynthModel` presents a synthesiser as
a ``SpeechModel`` whose ``respond`` speaks the user turn's text in the voice and style carried in
``user_turn.raw``; outside, :class:`WorkerSynth` presents that worker as a synthesiser again.

The worker environment needs stylebench (``pip install -e /path/to/stylebench --no-deps``, plus
numpy, scipy and soundfile, which CosyVoice's requirements already bring) and the TTS package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn
from stylebench.synth.base import Audio, Style, Voice

ADAPTER = "stylebench.model_wrappers.worker.synth:SynthModel"


class SynthModel(SpeechModel):
    """Inside the worker: a synthesiser behind ``respond`` (one user turn in, its speech out)."""

    def __init__(self, synth: str, **synth_args: str) -> None:
        from stylebench.synth.registry import SYNTHESIZERS

        self.name = f"synth:{synth}"
        self.synth = SYNTHESIZERS.load(synth)(**synth_args)

    def describe(self) -> dict[str, Any]:
        describe = getattr(self.synth, "describe", None)
        return describe() if callable(describe) else {"name": self.synth.name}

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        from stylebench.audio import write_wav
        from stylebench.model_wrappers.common import scratch_wav

        voice = Voice(**user_turn.raw["voice"])
        style = Style(**user_turn.raw.get("style", {}))
        audio = self.synth.synthesize(user_turn.text, voice, style)
        path = scratch_wav("synth")
        write_wav(path, audio.wave, audio.sr)
        return Turn("assistant", user_turn.text, str(path), audio.sr)


class WorkerSynth:
    """Outside: a synthesiser whose every call runs in a worker process (``python``)."""

    def __init__(
        self, python: str, synth: str, args: dict[str, str] | None = None, timeout_s: float = 600.0
    ) -> None:
        from stylebench.model_wrappers.worker import WorkerModel

        self.name = synth
        self._worker = WorkerModel(
            ADAPTER, {"synth": synth, **(args or {})}, python=python, turn_timeout_s=timeout_s
        )

    def describe(self) -> dict[str, Any]:
        return self._worker.describe()

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        """Speak ``text`` in the worker.

        Raises:
            AudioError: the worker's wav is unreadable, silent or shorter than 0.2 s (a user turn
                that says nothing would make a broken dialogue).
        """
        from stylebench.audio import load_audio

        raw = {"voice": asdict(voice), "style": asdict(style)}
        reply = self._worker.respond((), Turn("user", text, None, None, raw=raw), DecodeConfig())
        if not reply.audio:
            raise RuntimeError(f"{self.name} worker returned no audio for {text[:60]!r}")
        path = Path(reply.audio)
        try:
            wave, sr = load_audio(path)
        finally:
            path.unlink(missing_ok=True)
        return Audio(np.ascontiguousarray(wave, dtype=np.float32), sr)

    def close(self) -> None:
        self._worker.close()
