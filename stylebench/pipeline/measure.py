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
#: f0_extractors_disagree (blocks pitch): Praat confirms fewer than this share of pyworld's voiced
#: frames (lowest on clean real speech: 0.36 on the corpus, 0.28 on held-out model replies)
F0_MIN_AGREEMENT = 0.25
#: f0_octave_suspect (informational): more than this share of pyworld's voiced frames have Praat
#: an octave away (clean real speech: 99th percentile 0.07 on the corpus, 0.03 on replies)
OCTAVE_SUSPECT_SHARE = 0.10


def tolerances() -> dict[str, object]:
    """Every threshold a feature record's flags depend on; part of its fingerprint."""
    from stylebench.metrics import pitch, validity

    return {
        "f0_min_agreement": F0_MIN_AGREEMENT,
        "octave_suspect_share": OCTAVE_SUSPECT_SHARE,
        "f0_agree_st": pitch.AGREE_TOL_ST,
        "f0_edge_frames": pitch.EDGE_FRAMES,
        "vad_missed": (0.5, 0.25, 10.0),
        "min_speech_s": validity.MIN_SPEECH_S,
        "min_syllables": validity.MIN_SYLLABLES,
        "min_level_spread_db": validity.MIN_LEVEL_SPREAD_DB,
        "min_f0_spread_st": validity.MIN_F0_SPREAD_ST,
        "syl_per_s": validity.PLAUSIBLE_SYL_PER_S,
        "syl_per_nucleus": validity.PLAUSIBLE_SYL_PER_NUCLEUS,
        "same_content": (validity.SAME_CONTENT_COST, validity.SAME_CONTENT_SYL_TOL),
        "nuclei_spread": validity.NUCLEI_RATIO_SPREAD,
    }


#: feature values that depend on the speech span, computed for both detectors
SPAN_KEYS = (
    "span_start",
    "span_end",
    "span_s",
    "active_s",
    "rms_active",
    "rms_active_dbfs",
    "nuclei",
    "nuclei_spm",
    "level_spread_db",
)


@dataclass(frozen=True)
class FeatureConfig:
    vad: str = "silero"
    f0_floor: float = 50.0
    f0_ceil: float = 800.0
    frame_ms: float = 5.0

    def fp(self) -> str:
        from stylebench.metrics.spec import feature_specs

        versions = {s.name: s.version for s in feature_specs()}
        return fingerprint("features", versions, asdict(self), tolerances())


def analyse_reply(wave: np.ndarray, sr: int, cfg: FeatureConfig) -> dict[str, Any]:
    """Per-reply features that need only this reply's audio.

    Span-dependent values are computed for the energy span and, unless ``cfg.vad`` is
    ``"energy"``, for the Silero span; :func:`finish_sample` picks one set per sample. A detector
    that finds no speech leaves its set out; F0 is computed regardless.
    """
    from stylebench.metrics import energy, pitch, vad

    spans: dict[str, dict[str, float]] = {}
    missed, suspect = None, None  # None: Silero was not asked (``--vad energy``)
    peaks = None  # syllable-nucleus candidates: one Praat pass per reply, filtered per span
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
            if peaks is None:
                peaks = _voiced_peaks(wave, sr)
            spans[backend] = _span_values(wave, sr, span, peaks, energy, vad)
    track = pitch.f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    praat = pitch.praat_f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    from stylebench.metrics import alignment

    try:
        spectra = alignment.mfcc(wave, sr)
    except ValueError:  # too short to align: the speed cross-check cannot see this reply
        spectra = None
    rms = energy.rms_stats(wave)
    values = {
        "duration_s": wave.size / sr,
        "rms_file": rms.rms_file,
        "rms_file_dbfs": rms.rms_file_dbfs,
        **_quality_values(wave, sr),
    }
    return {
        "spans": spans,
        "silero_suspect": suspect,
        "missed_s": missed,
        "track": track,
        "praat_track": praat,
        "frame_ms": cfg.frame_ms,
        "mfcc": spectra,
        "values": values,
    }


def _quality_values(wave: np.ndarray, sr: int) -> dict[str, float]:
    """DNSMOS P.835 of the reply (:mod:`stylebench.metrics.quality`): a measured value, never a
    gate here. Absent when the reply is too short for it or speechmos is not installed."""
    from stylebench.metrics import quality

    if not quality.available():
        return {}
    try:
        return quality.dnsmos(wave, sr).values()
    except ValueError:  # under half a second: no quality score, the reply is unscored anyway
        return {}


def _voiced_peaks(wave: np.ndarray, sr: int) -> np.ndarray:
    from stylebench.metrics import rate

    return rate.voiced_peaks(wave, sr)


def _span_values(
    wave: np.ndarray, sr: int, span: Any, peaks: np.ndarray, energy: Any, vad: Any
) -> dict[str, float]:
    from stylebench.metrics import rate, validity

    rms = energy.rms_stats(wave, mask=vad.active_mask(span, wave.size, sr))
    nuclei = rate.nuclei_in_span(peaks, span).size
    return {
        "span_start": span.start,
        "span_end": span.end,
        "span_s": span.end - span.start,
        "active_s": span.active_s,
        "rms_active": rms.rms_active,
        "rms_active_dbfs": rms.rms_active_dbfs,
        "nuclei": float(nuclei),
        "nuclei_spm": rate.syllables_per_minute(nuclei, span.duration_s),
        "level_spread_db": validity.level_spread_db(wave, sr, span.start, span.end),
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
    silero_bad = [
        k
        for k, p in parts.items()
        if p["silero_suspect"] or ("silero" not in p["spans"] and "energy" in p["spans"])
    ]
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

    backend, vad_flags = choose_span(parts)
    for k, p in parts.items():
        chosen = p["spans"].get(backend)
        if chosen is None:
            vad_flags[k].append(
                "no_speech_span: neither detector found speech; volume and rate unscored"
            )
        p["values"] = {**p["values"], **(chosen or {})}
    costs = _alignment_costs(parts)
    out: dict[int, tuple[dict[str, float], list[str]] | str] = {}
    for k, p in parts.items():
        if k in costs:
            p["values"]["dtw_cost_prev"] = costs[k]
        try:
            values, flags = _finish_reply(p, transcripts.get(k), lang)
            out[k] = values, vad_flags[k] + flags
        except ValueError as exc:
            out[k] = f"ValueError: {exc}"
            continue
        text = (texts or {}).get(k, "").strip()
        values = out[k][0]
        if text and values.get("span_s", 0) > 0:
            from stylebench.metrics import rate
            from stylebench.metrics.validity import text_doubts

            syl = rate.count_syllables(text, lang)
            values["text_syllables"] = float(syl)
            if syl > 0:
                values["text_spm"] = rate.syllables_per_minute(syl, values["span_s"])
            active = values.get("active_s", 0.0)
            doubts = text_doubts(text, lang, syl, active, values.get("nuclei"))
            out[k][1].extend(f for f in doubts if f not in out[k][1])
        tr = transcripts.get(k)
        if text and tr is not None and tr.status == "ok":
            from stylebench.metrics.fidelity import transcript_error_rate

            er = transcript_error_rate(text, tr.text, lang)
            if not np.isnan(er):
                values["asr_text_er"] = er
        from stylebench.metrics.validity import blocking_flags

        out[k][1].extend(f for f in blocking_flags(values, out[k][1]) if f not in out[k][1])
    return out


def _finish_reply(p: dict[str, Any], tr: Any, lang: str) -> tuple[dict[str, float], list[str]]:
    """One reply's final values and quality flags.

    A measurement that cannot be made (no voiced frame, no transcript) leaves its value out and
    says why in ``flags`` (``no_f0: ...``, ``no_transcript``); the score stage turns a missing
    value into an error for that dimension only, and so does a blocking flag
    (:mod:`stylebench.metrics.validity`).
    """
    from stylebench.metrics import rate

    values, flags = dict(p["values"]), []
    flags += _pitch_values(p, values)
    if tr is None:
        return {n: float(v) for n, v in values.items()}, flags
    if tr.status != "ok":
        flags.append(f"no_transcript: {tr.error}")
        return {n: float(v) for n, v in values.items()}, flags
    syl = rate.count_syllables(tr.text, lang)
    values["syllables"] = float(syl)
    flags += [f for f in tr.flags if f not in flags]
    if syl > 0:
        from stylebench.metrics.validity import transcript_doubts

        nuclei = values.get("nuclei")
        doubts = transcript_doubts(tr.text, lang, syl, values.get("active_s", 0.0), nuclei)
        flags += [f for f in doubts if f not in flags]
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


def _pitch_values(p: dict[str, Any], values: dict[str, float]) -> list[str]:
    """Add one reply's F0 statistics to ``values``; returns its pitch flags.

    The score (``f0_mean_agreed``) averages the frames the two trackers agree on
    (:func:`stylebench.metrics.pitch.agreed_frames`, edges trimmed). The octave guard is the
    reply's own: the median of its agreed frames +-0.75 octave, so a true change of any size
    between turns is never clipped (a guard pooled over the sample's turns cut the frames of a
    male-to-female voice switch).
    """
    from stylebench.metrics import pitch
    from stylebench.metrics.dims.base import ReplyFrames, all_dims
    from stylebench.metrics.prosody import f0_spread_st

    track, praat, flags = p["track"], p["praat_track"], []
    try:
        raw = pitch.f0_stats(track)
    except ValueError as exc:
        return [f"no_f0: {exc}"]
    values.update(f0_mean=raw.mean_hz, f0_median=raw.median_hz, f0_voiced_ratio=raw.voiced_ratio)
    try:
        values["praat_f0_mean"] = pitch.f0_stats(praat, extractor="praat").mean_hz
    except ValueError:
        flags.append("praat_unvoiced")
    voiced = max(1, int(np.sum(track > 0)))
    values["f0_agreement"] = float(np.sum(pitch.agreed_frames(track, praat)) / voiced)
    values["f0_octave_share"] = pitch.octave_share(track, praat)
    if values["f0_agreement"] < F0_MIN_AGREEMENT:
        flags.append("f0_extractors_disagree")
    if values["f0_octave_share"] > OCTAVE_SUSPECT_SHARE:
        flags.append("f0_octave_suspect")
    agreed = np.where(pitch.agreed_frames(track, praat, edge=pitch.EDGE_FRAMES), track, 0.0)
    try:
        both = pitch.f0_stats(agreed, extractor="pyworld+praat")
    except ValueError as exc:
        flags.append(f"no_f0: the trackers agree on too few frames ({exc})")
        values["f0_mean_guarded"] = raw.mean_hz
        return flags
    values.update(f0_mean_agreed=both.mean_hz, f0_median_agreed=both.median_hz)
    values["f0_std_st"] = f0_spread_st(agreed)
    frames = ReplyFrames(agreed_f0=agreed, frame_ms=p.get("frame_ms", 5.0))
    for dim in all_dims():  # values a dimension measures itself (its module's SPEC)
        own, why = dim.reply_values(frames)
        values.update(own)
        flags.extend(why)
    if values.get("span_s", 0) > 0:
        voiced_s = both.voiced_frames * p.get("frame_ms", 5.0) / 1000.0
        values["f0_voiced_span_share"] = min(1.0, voiced_s / values["span_s"])
    lo, hi = pitch.speaker_f0_range([agreed])
    values.update(f0_range_lo=lo, f0_range_hi=hi)
    try:
        values["f0_mean_guarded"] = pitch.f0_stats(track, f0_range=(lo, hi)).mean_hz
    except ValueError as exc:  # pyworld's frames all outside its own agreed range
        flags.append(f"no_f0_guarded: {exc}")
    return flags


def _alignment_costs(parts: dict[int, dict[str, Any]]) -> dict[int, float]:
    """Per turn, the DTW cost of its speech span's MFCCs against the previous turn's
    (:mod:`stylebench.metrics.alignment`): low when the two say the same words."""
    from stylebench.metrics.alignment import HOP_S, alignment_cost

    def spectra(p: dict[str, Any]) -> np.ndarray | None:
        m, v = p.get("mfcc"), p["values"]
        if m is None or "span_start" not in v:
            return None
        seg = m[int(v["span_start"] / HOP_S) : int(v["span_end"] / HOP_S) + 1]
        return seg if len(seg) >= 3 else None

    turns = sorted(parts)
    out = {}
    for prev, k in zip(turns, turns[1:], strict=False):
        a, b = spectra(parts[prev]), spectra(parts[k])
        if a is not None and b is not None:
            out[k] = alignment_cost(a, b)
    return out
