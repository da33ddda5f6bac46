"""``shuffled``: the gate's calibration row. It follows the style but loses the content.

Turn 1 speaks the scripted answer, as ``reference`` does. Turns 2 and 3 ("say it again, but
louder/faster/...") speak the content of *another* sample instead: an item of the same
language's content pool (``dialogues/pools/neutral_<lang>.jsonl``) other than the scripted one,
chosen by a seeded hash of (scripted content, turn, seed), and different for turns 2 and 3.
The style steps are those of ``reference`` (x1.25 or x0.8 rate, +-4 dB, +-2 semitones per turn),
in the same voice.

So its turn-1 relevance (SRD) is high and its multi-turn consistency (MRD) is near 0: a judge
that works puts it under the MRD gate, and its style cells (VSP near 100%, since it does follow
the style instructions) are reported as not eligible. ``from_turn=1`` shuffles turn 1 too.
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

#: per-turn steps, the same sizes as ``reference`` (a test checks they agree)
STEPS = {"speed": 1.25, "volume": 4.0, "pitch": 2.0}


def style_after(dim: str, direction: str, steps: int) -> Style:
    """The style after ``steps`` steps along ``dim`` (emotion: pitch, rate and level together)."""
    sign = 1 if direction == "intensify" else -1
    if dim == "emotion":
        return Style(rate=1.1 ** (sign * steps), gain_db=3.0 * sign * steps, pitch_st=1.5 * sign * steps)  # fmt: skip
    if dim == "speed":
        return Style(rate=STEPS["speed"] ** (sign * steps))
    if dim == "volume":
        return Style(gain_db=sign * STEPS["volume"] * steps)
    return Style(pitch_st=sign * STEPS["pitch"] * steps)


def other_contents(content: str, lang: str, seed: int) -> list[str]:
    """Pool contents of ``lang`` other than ``content``, in a seeded order fixed by ``content``."""
    from stylebench.dialogues.builder import load_contents

    pool = sorted({item.content for item in load_contents(lang)} - {content})
    if len(pool) < 2:
        raise ValueError(f"the {lang} content pool needs two other contents to shuffle from")
    order = seeded_rng("shuffled", content, seed).permutation(len(pool))
    return [pool[i] for i in order]


class ShuffledModel(SpeechModel):
    """Gate calibration: style followed, content swapped for another sample's from turn 2."""

    name = "shuffled"

    def __init__(
        self, voice_en: str = "en-f1", voice_zh: str = "zh-f1", from_turn: int = 2
    ) -> None:
        self.voices = {"en": VOICES[voice_en], "zh": VOICES[voice_zh]}
        self.from_turn = int(from_turn)
        if self.from_turn not in (1, 2, 3):
            raise ValueError(f"from_turn must be 1, 2 or 3, got {from_turn!r}")
        self.synth = EspeakSynth()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "revision": "1",
            "tts": self.synth.version(),
            "voices": {k: v.id for k, v in self.voices.items()},
            "from_turn": self.from_turn,
        }

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        script = script_of(user_turn)
        k = len(assistant_turns(list(history))) + 1  # this reply's turn, 1-based
        lang = script["lang"]
        text = script["content"]
        if k >= self.from_turn:
            text = other_contents(script["content"], lang, decode.seed)[k - 1]
        style = style_after(script["dim"], script["direction"], k - 1)
        audio = self.synth.synthesize(text, self.voices[lang], style)
        path = scratch_wav(self.name)
        write_wav(path, audio.wave, audio.sr)
        return Turn("assistant", text, str(path), audio.sr, raw={"style": vars(style), "shuffled": k >= self.from_turn})  # fmt: skip
