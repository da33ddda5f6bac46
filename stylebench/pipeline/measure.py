"""What the features stage computes: per-reply measurements, then the sample-level decisions (the
VAD fallback, the pitch guard) and the transcript-based rates (pure functions of audio,
transcripts and the text channel).

The VAD rule is one per sample: every reply gets a Silero span and an energy span, and Silero's
span is cross-checked against the audio outside it (:func:`stylebench.metrics.vad.missed_speech_s`).
When Silero missed speech in any reply of a sample, or found none, all of that sample's replies
use the energy span (flag ``vad_energy_fallback``), so the three turns' volume and rate share one
definition. Pitch needs no span and survives a VAD failure."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from stylebench.pipeline.keys import fingerprint

ANALYSIS_SR = 16000
#: flag thresholds; part of every feature record's fingerprint
#: f0_extractors_disagree: fewer than this share of pyworld's voiced frames confirmed by Praat
F0_MIN_AGREEMENT = 0.30
OCTAVE_SUSPECT_TOL = 0.05
TOLERANCES = {"f0_min_agreement": F0_MIN_AGREEMENT, "octave_suspect": OCTAVE_SUSPECT_TOL,
              "f0_agree_st": 1.0, "vad_missed": (0.5, 0.25, 10.0)}  # fmt: skip
#: feature values that depend on the speech span, computed for both detectors
SPAN_KEYS = ("span_start", "span_end", "span_s", "active_s", "rms_active", "rms_active_dbfs", "nuclei_spm")


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
    """Per-reply features that need only this reply's audio.

    Span-dependent values are computed for the energy span and, unless ``cfg.vad`` is
    ``"energy"``, for the Silero span; :func:`finish_sample` picks one set per sample. A detector
    that finds no speech leaves its set out; F0 is computed regardless.
    """
    from stylebench.metrics import energy, pitch, vad

    spans: dict[str, dict[str, float]] = {}
    missed, suspect = None, None  # None: Silero was not asked (``--vad energy``)
    for backend in ("energy",) if cfg.vad == "energy" else ("silero", "energy"):
        try:
            span = vad.speech_span(wave, sr, backend=backend)
        except ValueError as exc:
            if "no speech detected" not in str(exc):
                raise
            span = None
        if backend == "silero":
            missed = vad.missed_speech_s(wave, sr, span)
            suspect = vad.span_is_suspect(missed, span)
        if span is not None:
            spans[backend] = _span_values(wave, sr, span, energy, vad)
    track = pitch.f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    praat = pitch.praat_f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    rms = energy.rms_stats(wave)
    values = {"duration_s": wave.size / sr, "rms_file": rms.rms_file, "rms_file_dbfs": rms.rms_file_dbfs}
    return {
        "spans": spans,
        "silero_suspect": suspect,
        "missed_s": missed,
        "track": track,
        "praat_track": praat,
        "values": values,
    }


def _span_values(wave: np.ndarray, sr: int, span: Any, energy: Any, vad: Any) -> dict[str, float]:
    from stylebench.metrics import rate

    rms = energy.rms_stats(wave, mask=vad.active_mask(span, wave.size, sr))
    return {
        "span_start": span.start,
        "span_end": span.end,
        "span_s": span.end - span.start,
        "active_s": span.active_s,
        "rms_active": rms.rms_active,
        "rms_active_dbfs": rms.rms_active_dbfs,
        "nuclei_spm": rate.nuclei_rate(wave, sr, span=span),
    }


def choose_span(parts: dict[int, dict[str, Any]]) -> tuple[str | None, dict[int, list[str]]]:
    """The sample's span detector and the per-turn VAD flags.

    Silero unless some reply's Silero span is suspect or missing while the energy detector
    found speech; then energy for every reply (``vad_energy_fallback``), and the reply that caused
    it also carries ``vad_silero_missed_speech``.
    """
    flags: dict[int, list[str]] = {k: [] for k in parts}
    if all(p["silero_suspect"] is None for p in parts.values()):  # --vad energy: no cross-check
        return "energy", flags
    silero_bad = [k for k, p in parts.items() if p["silero_suspect"] or ("silero" not in p["spans"] and "energy" in p["spans"])]  # fmt: skip
    uses_silero = any("silero" in p["spans"] for p in parts.values())
    backend = "silero" if uses_silero and not silero_bad else "energy"
    for k in silero_bad:
        flags[k].append("vad_silero_missed_speech")
    if backend == "energy" and uses_silero:
        for k in parts:
            flags[k].append("vad_energy_fallback")
    return backend, flags


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

    backend, vad_flags = choose_span(parts)
    for k, p in parts.items():
        chosen = p["spans"].get(backend)
        if chosen is None:
            vad_flags[k].append("no_speech_span: neither detector found speech; volume and rate unscored")
        p["values"] = {**p["values"], **(chosen or {})}
    tracks = [p["track"] for p in parts.values() if np.any(p["track"] > 0)]
    try:
        f0_range = pitch.speaker_f0_range(tracks) if tracks else None
    except ValueError:  # too few voiced frames in the whole sample: each turn reports its own error
        f0_range = None
    out: dict[int, tuple[dict[str, float], list[str]] | str] = {}
    for k, p in parts.items():
        try:
            values, flags = _finish_reply(p, transcripts.get(k), lang, f0_range)
            out[k] = values, vad_flags[k] + flags
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
        if abs(guarded.mean_hz / raw.mean_hz - 1) > OCTAVE_SUSPECT_TOL:
            flags.append("f0_octave_suspect")
        try:
            values["praat_f0_mean"] = pitch.f0_stats(p["praat_track"], extractor="praat").mean_hz
        except ValueError:
            flags.append("praat_unvoiced")
        agreed = np.where(pitch.agreed_frames(p["track"], p["praat_track"]), p["track"], 0.0)
        values["f0_agreement"] = float(np.sum(agreed > 0) / max(1, np.sum(p["track"] > 0)))
        if values["f0_agreement"] < F0_MIN_AGREEMENT:
            flags.append("f0_extractors_disagree")
        try:
            both = pitch.f0_stats(agreed, extractor="pyworld+praat")
            values.update(f0_mean_agreed=both.mean_hz, f0_median_agreed=both.median_hz)
            values["f0_std_st"] = f0_spread_st(agreed)
        except ValueError as exc:
            flags.append(f"no_f0: the trackers agree on too few frames ({exc})")
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
    if "span_s" not in values:
        return {n: float(v) for n, v in values.items()}, flags
    values["spm"] = rate.syllables_per_minute(syl, values["span_s"])
    if tr.words:
        w_span = tr.words[-1][2] - tr.words[0][1]
        if w_span > 0:
            values["spm_words"] = rate.syllables_per_minute(syl, w_span)
    if values.get("nuclei_spm", 0) > 0:  # a diagnostic only: the nuclei rate does not follow tempo
        values["spm_nuclei_ratio"] = values["spm"] / values["nuclei_spm"]
    return {n: float(v) for n, v in values.items()}, flags
