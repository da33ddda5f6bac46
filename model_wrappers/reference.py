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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.audio import write_wav
from stylebench.model_wrappers._common import assistant_turns, scratch_wav, script_of
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn
from stylebench.synth.base import Style
from stylebench.synth.espeak import VOICES, EspeakSynth

STEP = {"speed": ("rate", 1.25), "volume": ("gain_db", 4.0), "pitch": ("pitch_st", 2.0)}
DEFAULT_VOICE = {"en": "en-f1", "zh": "zh-f1"}


def step_style(
    dim: str, direction: str, steps: int, step: float | None = None, emotion: str = ""
) -> Style:
    """The style after ``steps`` steps in ``direction`` along ``dim`` (emotion: prosodic proxy,
    on the emotion's arousal side; an unnamed emotion counts as high-arousal)."""
    if dim == "emotion":  # expressed through its prosodic correlates: pitch, rate and loudness
        from stylebench.metrics.prosody import AROUSAL_SIGN

        sign = (1 if direction == "intensify" else -1) * AROUSAL_SIGN.get(emotion, 1)
        return Style(
            rate=1.1 ** (sign * steps), gain_db=3.0 * sign * steps, pitch_st=1.5 * sign * steps
        )
    field_name, default = STEP[dim]
    size = default if step is None else step
    if field_name == "rate":
        factor = size if direction == "intensify" else 1.0 / size
        return Style(rate=factor**steps)
    sign = 1.0 if direction == "intensify" else -1.0
    return Style(**{field_name: sign * size * steps})


class ReferenceModel(SpeechModel):
    """Oracle: scripted content, exact style steps, espeak-ng voice."""

    name = "reference"

    def __init__(
        self,
        voice_en: str = DEFAULT_VOICE["en"],
        voice_zh: str = DEFAULT_VOICE["zh"],
        step: float | None = None,
    ) -> None:
        self.voices = {"en": VOICES[voice_en], "zh": VOICES[voice_zh]}
        self.step = None if step is None else float(step)
        self.synth = EspeakSynth()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "revision": "1",
            "tts": self.synth.version(),
            "voices": {k: v.id for k, v in self.voices.items()},
            "step": self.step,
        }

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        script = script_of(user_turn)
        steps = len(assistant_turns(list(history)))
        style = step_style(
            script["dim"], script["direction"], steps, self.step, script.get("emotion", "")
        )
        text = script["content"]
        audio = self.synth.synthesize(text, self.voices[script["lang"]], style)
        path = scratch_wav(self.name)
        write_wav(path, audio.wave, audio.sr)
        return Turn("assistant", text, str(path), audio.sr, raw={"style": vars(style)})
