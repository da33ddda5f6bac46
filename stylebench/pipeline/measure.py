"""What the features stage computes: per-reply measurements, then the sample-level pitch guard
and the transcript-based rates (pure functions of audio, transcripts and the text channel)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from stylebench.pipeline.keys import fingerprint

ANALYSIS_SR = 16000
#: flag thresholds; part of every feature record's fingerprint
F0_DISAGREE_TOL = 0.10
OCTAVE_SUSPECT_TOL = 0.05
RATE_DISAGREE_RANGE = (0.6, 1.6)
TOLERANCES = {"f0_disagree": F0_DISAGREE_TOL, "octave_suspect": OCTAVE_SUSPECT_TOL,
              "rate_disagree": RATE_DISAGREE_RANGE}  # fmt: skip


@dataclass(frozen=True)
class FeatureConfig:
    vad: str = "silero"
    f0_floor: float = 50.0
    f0_ceil: float = 800.0
    frame_ms: float = 5.0

    def fp(self) -> str:
        from stylebench.metrics.spec import feature_specs

        versions = {s.name: s.version for s in feature_specs()}
        return fingerprint("features", versions, asdict(self), TOLERANCES)


def analyse_reply(wave: np.ndarray, sr: int, cfg: FeatureConfig) -> dict[str, Any]:
    """Per-reply features that need only this reply's audio."""
    from stylebench.metrics import energy, pitch, rate, vad

    span = vad.speech_span(wave, sr, backend=cfg.vad)
    mask = vad.active_mask(span, wave.size, sr)
    rms = energy.rms_stats(wave, mask=mask)
    track = pitch.f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    praat = pitch.praat_f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    return {
        "span": span,
        "track": track,
        "praat_track": praat,
        "values": {
            "duration_s": wave.size / sr,
            "span_start": span.start,
            "span_end": span.end,
            "span_s": span.end - span.start,
            "active_s": span.active_s,
            "rms_active": rms.rms_active,
            "rms_active_dbfs": rms.rms_active_dbfs,
            "rms_file": rms.rms_file,
            "rms_file_dbfs": rms.rms_file_dbfs,
            "nuclei_spm": rate.nuclei_rate(wave, sr, span=span),
        },
    }


def finish_sample(
    parts: dict[int, dict[str, Any]],
    transcripts: dict[int, Any],
    lang: str,
    texts: dict[int, str] | None = None,
) -> dict[int, tuple[dict[str, float], list[str]] | str]:
    """Add the sample-level pitch guard and the transcript-based rate to each reply's features.

    ``texts`` are the models' own text channel per turn (when a model emits text beside speech):
    their syllables over the same speech span give ``text_spm``, a rate estimate independent of
    ASR errors, used by the score stage only when the ASR is unreliable for a sample; the
    transcript's error rate against that text is ``asr_text_er`` (:mod:`stylebench.metrics.fidelity`).

    Returns, per turn, ``(values, flags)`` or the error message that makes the turn unscorable.
    """
    from stylebench.metrics import pitch

    tracks = [p["track"] for p in parts.values() if np.any(p["track"] > 0)]
    try:
        f0_range = pitch.speaker_f0_range(tracks) if tracks else None
    except ValueError:  # too few voiced frames in the whole sample: each turn reports its own error
        f0_range = None
    out: dict[int, tuple[dict[str, float], list[str]] | str] = {}
    for k, p in parts.items():
        try:
            out[k] = _finish_reply(p, transcripts.get(k), lang, f0_range)
        except ValueError as exc:
            out[k] = f"ValueError: {exc}"
            continue
        text = (texts or {}).get(k, "").strip()
        values = out[k][0]
        if text and values.get("span_s", 0) > 0:
            from stylebench.metrics import rate

            syl = rate.count_syllables(text, lang)
            values["text_syllables"] = float(syl)
            if syl > 0:
                values["text_spm"] = rate.syllables_per_minute(syl, values["span_s"])
        tr = transcripts.get(k)
        if text and tr is not None and tr.status == "ok":
            from stylebench.metrics.fidelity import transcript_error_rate

            er = transcript_error_rate(text, tr.text, lang)
            if not np.isnan(er):
                values["asr_text_er"] = er
    return out


def _finish_reply(
    p: dict[str, Any], tr: Any, lang: str, f0_range: tuple[float, float] | None
) -> tuple[dict[str, float], list[str]]:
    """One reply's final values and quality flags.

    A measurement that cannot be made (no voiced frame, no transcript) leaves its value out and
    says why in ``flags`` (``no_f0: ...``, ``no_transcript``); the score stage turns a missing
    value into an error for that dimension only.
    """
    from stylebench.metrics import pitch, rate
    from stylebench.metrics.prosody import f0_spread_st

    values, flags = dict(p["values"]), []
    try:
        raw = pitch.f0_stats(p["track"])
        guarded = pitch.f0_stats(p["track"], f0_range=f0_range) if f0_range else raw
        values.update(
            f0_mean=raw.mean_hz,
            f0_median=raw.median_hz,
            f0_voiced_ratio=raw.voiced_ratio,
            f0_mean_guarded=guarded.mean_hz,
        )
        if f0_range:
            values.update(f0_range_lo=f0_range[0], f0_range_hi=f0_range[1])
        values["f0_std_st"] = f0_spread_st(p["track"], f0_range)
        if abs(guarded.mean_hz / raw.mean_hz - 1) > OCTAVE_SUSPECT_TOL:
            flags.append("f0_octave_suspect")
        try:
            pr = pitch.f0_stats(p["praat_track"], extractor="praat")
            values["praat_f0_mean"] = pr.mean_hz
            if pitch.extractors_disagree(raw, pr, tol=F0_DISAGREE_TOL):
                flags.append("f0_extractors_disagree")
        except ValueError:
            flags.append("praat_unvoiced")
    except ValueError as exc:
        flags.append(f"no_f0: {exc}")
    if tr is None:
        return {n: float(v) for n, v in values.items()}, flags
    if tr.status != "ok":
        flags.append(f"no_transcript: {tr.error}")
        return {n: float(v) for n, v in values.items()}, flags
    syl = rate.count_syllables(tr.text, lang)
    values["syllables"] = float(syl)
    flags += [f for f in tr.flags if f not in flags]
    if syl == 0:
        flags.append("no_syllables: the transcript is empty")
        return {n: float(v) for n, v in values.items()}, flags
    values["spm"] = rate.syllables_per_minute(syl, values["span_s"])
    if tr.words:
        w_span = tr.words[-1][2] - tr.words[0][1]
        if w_span > 0:
            values["spm_words"] = rate.syllables_per_minute(syl, w_span)
    if values["nuclei_spm"] > 0:
        ratio = values["spm"] / values["nuclei_spm"]
        values["spm_nuclei_ratio"] = ratio
        if not RATE_DISAGREE_RANGE[0] <= ratio <= RATE_DISAGREE_RANGE[1]:
            flags.append("rate_asr_nuclei_disagree")
    return {n: float(v) for n, v in values.items()}, flags
