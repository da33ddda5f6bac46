"""espeak-ng: the offline default synthesiser (no weights, no GPU, milliseconds per sentence).

Mandarin goes through the ``cmn-latn-pinyin`` voice: plain ``cmn`` reads tone digits as English.
Rate is set natively (``-s`` words per minute); pitch and gain are FFmpeg transforms so that a
requested shift in semitones or dB is exact.
"""

from __future__ import annotations

import io
import subprocess

import numpy as np

from stylebench.synth.base import Audio, Style, Voice, number_arg
from stylebench.synth.ffmpeg import apply_style, require_tool

DEFAULT_WPM = 165
MIN_WPM, MAX_WPM = 80, 450  # the rates espeak-ng speaks at
REFERENCE_GAIN_DB = -12.0  # headroom so that "louder" turns do not clip

VOICES: dict[str, Voice] = {
    v.id: v
    for v in (
        Voice("en-m1", "en", "en-us", "American English, male"),
        Voice("en-f1", "en", "en-us+f3", "American English, female variant"),
        Voice("en-m2", "en", "en-gb-x-rp", "British English (RP), male"),
        Voice("en-f2", "en", "en-gb+f4", "British English, female variant"),
        Voice("zh-m1", "zh", "cmn-latn-pinyin", "Mandarin, male"),
        Voice("zh-f1", "zh", "cmn-latn-pinyin+f2", "Mandarin, female variant"),
        Voice("zh-m2", "zh", "cmn-latn-pinyin+m3", "Mandarin, male variant"),
        Voice("zh-f2", "zh", "cmn-latn-pinyin+f4", "Mandarin, female variant"),
    )
}


def voices_for(lang: str) -> list[Voice]:
    out = [v for v in VOICES.values() if v.lang == lang]
    if not out:
        raise ValueError(f"espeak-ng has no voice for {lang!r} (it speaks en and zh)")
    return out


class EspeakSynth:
    """espeak-ng through its command-line program."""

    name = "espeak-ng"

    def __init__(
        self, wpm: int | str = DEFAULT_WPM, reference_gain_db: float | str = REFERENCE_GAIN_DB
    ) -> None:
        self.wpm = number_arg(self.name, "wpm", wpm, low=MIN_WPM, high=MAX_WPM, whole=True)
        self.reference_gain_db = number_arg(
            self.name, "reference_gain_db", reference_gain_db, low=-60, high=30
        )

    def voices_for(self, lang: str) -> list[Voice]:
        """The espeak-ng voices of ``lang``."""
        return voices_for(lang)

    def version(self) -> str:
        exe = require_tool("espeak-ng")
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
        return out.stdout.strip()

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        """Speak ``text`` in ``voice`` with ``style``; returns float32 mono at espeak's 22.05 kHz."""
        import soundfile as sf

        if not text.strip():
            raise ValueError("espeak-ng: cannot synthesise empty text")
        exe = require_tool("espeak-ng")
        wpm = max(MIN_WPM, min(MAX_WPM, round(self.wpm * style.rate)))
        # text goes through stdin, never the command line, so no option injection is possible
        proc = subprocess.run(
            [exe, "-v", voice.backend_voice, "-s", str(wpm), "--stdout"],
            input=text.encode("utf-8"),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0 or not proc.stdout:
            raise RuntimeError(f"espeak-ng failed for voice {voice.backend_voice}: {proc.stderr!r}")
        wave, sr = sf.read(io.BytesIO(proc.stdout), dtype="float32")
        if wave.ndim > 1:
            wave = wave.mean(axis=1)
        audio = Audio(np.asarray(wave, dtype=np.float32), int(sr))
        post = Style(pitch_st=style.pitch_st, gain_db=style.gain_db + self.reference_gain_db)
        return apply_style(audio, post, include_rate=False)
