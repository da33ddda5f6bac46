"""``neutral``: the floor row. Same voice and content as ``reference``, instructions ignored.

To look like a real model that simply does not follow style instructions, each turn opens with a
different short lead-in and carries a small seeded jitter (rate +-3%, pitch +-0.3 semitone,
level +-0.4 dB: all below the scoring thresholds). Its VSP is the metric's false-positive rate
under realistic turn-to-turn variation, and should stay near 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.audio import write_wav
from stylebench.model_wrappers._common import assistant_turns, scratch_wav, script_of, seeded_rng
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn
from stylebench.synth.base import Style
from stylebench.synth.espeak import VOICES, EspeakSynth

LEAD_INS = {
    "en": ("", "Sure.", "Okay, again."),
    "zh": ("", "好的。", "行，再说一遍。"),
}
JITTER = {"rate": 0.03, "pitch_st": 0.3, "gain_db": 0.4}


class NeutralModel(SpeechModel):
    """Floor: ignores style instructions, with natural-sized variation between turns."""

    name = "neutral"

    def __init__(self, voice_en: str = "en-f1", voice_zh: str = "zh-f1") -> None:
        self.voices = {"en": VOICES[voice_en], "zh": VOICES[voice_zh]}
        self.synth = EspeakSynth()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "revision": "1",
            "tts": self.synth.version(),
            "voices": {k: v.id for k, v in self.voices.items()},
            "jitter": JITTER,
        }

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        script = script_of(user_turn)
        k = len(assistant_turns(list(history)))
        lang = script["lang"]
        lead = LEAD_INS[lang][k % len(LEAD_INS[lang])]
        text = f"{lead} {script['content']}".strip() if lang == "en" else lead + script["content"]
        rng = seeded_rng(self.name, script["content"], k, decode.seed)
        style = Style(
            rate=1.0 + rng.uniform(-JITTER["rate"], JITTER["rate"]),
            pitch_st=rng.uniform(-JITTER["pitch_st"], JITTER["pitch_st"]),
            gain_db=rng.uniform(-JITTER["gain_db"], JITTER["gain_db"]),
        )
        audio = self.synth.synthesize(text, self.voices[lang], style)
        path = scratch_wav(self.name)
        write_wav(path, audio.wave, audio.sr)
        return Turn("assistant", text, str(path), audio.sr, raw={"style": vars(style)})
