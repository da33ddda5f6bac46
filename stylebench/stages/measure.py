"""What the features stage computes: per-reply measurements, then the sample-level decisions (the
VAD fallback, the pitch guard) and the transcript-based rates (pure functions of audio,
transcripts and the text channel).

The VAD rule is one per sample: every reply gets a Silero span and an energy span, and Silero's
span is cross-checked against the audio outside it (:func:`stylebench.metrics.vad.missed_speech_s`).
When Silero missed speech in any reply of a sample, or found none, all of that sample's replies
use the energy span (flag ``vad_energy_fallback``), so the three turns' rates share one
definition. Pitch needs no span and survives a VAD failure; volume needs a span only to know that
the reply holds speech (its relative gate reads the whole file, not the segments)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from stylebench.pipeline.keys import fingerprint

ANALYSIS_SR = 16000


def tolerances() -> dict[str, object]:
    """Every threshold a feature record's flags depend on; part of its fingerprint."""
    from stylebench.metrics import energy, pitch, validity
    from stylebench.metrics.dims.pitch import (
        F0_MIN_AGREEMENT,
        NEAR_CEILING_SHARE,
        NEAR_CEILING_ST,
        OCTAVE_SUSPECT_SHARE,
    )

    return {
        "volume_gate": (energy.GATE_WINDOW_S, energy.GATE_DROP_DB),
        "f0_min_agreement": F0_MIN_AGREEMENT,
        "octave_suspect_share": OCTAVE_SUSPECT_SHARE,
        "f0_near_ceiling": (NEAR_CEILING_ST, NEAR_CEILING_SHARE),
        "f0_agree_st": pitch.AGREE_TOL_ST,
        "f0_edge_frames": pitch.EDGE_FRAMES,
        "vad_missed": (0.5, 0.25, 10.0),
        "min_speech_s": validity.MIN_SPEECH_S,
        "min_syllables": validity.MIN_SYLLABLES,
        "min_level_spread_db": validity.MIN_LEVEL_SPREAD_DB,
        "min_f0_spread_st": validity.MIN_F0_SPREAD_ST,
        "min_voiced_share": validity.MIN_VOICED_SHARE,
        "whisper": (validity.WHISPER_MAX_VOICED, validity.WHISPER_MIN_HIGH_BAND),
        "min_declared_lang_p": validity.MIN_DECLARED_LANG_P,
        "unsure": (validity.MAX_UNSURE_WORD_SHARE, validity.MAX_UNSURE_MEAN_LOGPROB),
        "subharmonic_st": pitch.SUBHARMONIC_ST,
        "far_above_st": pitch.FAR_ABOVE_ST,
        "text_syl_per_nucleus": validity.TEXT_SYL_PER_NUCLEUS,
        "syl_per_s": validity.PLAUSIBLE_SYL_PER_S,
        "syl_per_nucleus": validity.PLAUSIBLE_SYL_PER_NUCLEUS,
        "same_content": (validity.SAME_CONTENT_COST, validity.SAME_CONTENT_SYL_TOL),
        "nuclei_spread": validity.NUCLEI_RATIO_SPREAD,
    }


@dataclass(frozen=True)
class FeatureConfig:
    vad: str = "silero"
    f0_floor: float = 50.0
    f0_ceil: float = 1100.0
    frame_ms: float = 5.0
    #: DNSMOS P.835 of every reply (:mod:`stylebench.metrics.quality`), computed by the features
    #: stage's job; resolved to False where speechmos is not installed, so installing it re-keys
    quality: bool = True

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

    track = pitch.f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    praat = pitch.praat_f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    swift = pitch.swift_f0_track(
        wave, sr, frame_ms=cfg.frame_ms, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil
    )
    voiced = pitch.voted_voiced([track, praat, swift])
    spans: dict[str, dict[str, float]] = {}
    segments: dict[str, tuple[tuple[float, float], ...]] = {}
    missed, suspect = None, None  # None: Silero was not asked (``--vad energy``)
    peaks = None  # syllable-nucleus candidates: one Praat pass per reply, filtered per span
    for backend in ("energy",) if cfg.vad == "energy" else ("silero", "energy"):
        try:
            span = vad.speech_span(
                wave, sr, backend=backend, voiced=voiced, voiced_frame_s=cfg.frame_ms / 1000.0
            )
        except ValueError as exc:
            if "no speech detected" not in str(exc):
                raise
            span = None
        if backend == "silero":
            missed = vad.missed_speech_s(wave, sr, span)
            suspect = vad.span_is_suspect(missed, span)
        if span is not None:
            if peaks is None:
                peaks = _voiced_peaks(wave, sr, praat, cfg.frame_ms / 1000.0)
            spans[backend] = _span_values(wave, sr, span, peaks, energy, vad)
            segments[backend] = span.segments
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
    }
    return {
        "spans": spans,
        "segments": segments,
        "silero_suspect": suspect,
        "missed_s": missed,
        "track": track,
        "praat_track": praat,
        "swift_track": swift,
        "level_track": pitch.frame_levels_db(wave, sr, track.size, frame_ms=cfg.frame_ms),
        "frame_ms": cfg.frame_ms,
        "f0_ceil": cfg.f0_ceil,
        "wave": wave,
        "sr": sr,
        "mfcc": spectra,
        "values": values,
    }


def _voiced_peaks(wave: np.ndarray, sr: int, praat: np.ndarray, frame_s: float) -> np.ndarray:
    from stylebench.metrics import rate

    return rate.voiced_peaks(wave, sr, praat, frame_s)


def _span_values(
    wave: np.ndarray,
    sr: int,
    span: Any,
    peaks: np.ndarray,
    energy: Any,
    vad: Any,
) -> dict[str, float]:
    from stylebench.metrics import rate, validity

    active = vad.active_mask(span, wave.size, sr)
    rms = energy.rms_stats(wave, mask=active)
    nuclei = rate.nuclei_in_span(peaks, span).size
    return {
        "high_band_share": validity.high_band_share(wave, sr, active),
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
    aligned = _alignments(parts, backend)
    out: dict[int, tuple[dict[str, float], list[str]] | str] = {}
    for k, p in parts.items():
        if k in aligned:
            prev, al = aligned[k]
            p["values"].update(
                dtw_cost_prev=al.cost, dtw_tempo_prev=al.tempo, dtw_turn_prev=float(prev)
            )
        try:
            values, reply_flags = _finish_reply(p, transcripts.get(k), lang)
        except ValueError as exc:
            out[k] = f"ValueError: {exc}"
            continue
        flags = vad_flags[k] + reply_flags
        out[k] = values, flags
        text = (texts or {}).get(k, "").strip()
        if text and values.get("span_s", 0) > 0:
            from stylebench.metrics import rate
            from stylebench.metrics.validity import text_doubts

            syl = rate.count_syllables(text, lang)
            values["text_syllables"] = float(syl)
            if syl > 0:
                values["text_spm"] = rate.syllables_per_minute(syl, values["span_s"])
            active = values.get("active_s", 0.0)
            doubts = text_doubts(text, lang, syl, active, values.get("nuclei"))
            flags.extend(f for f in doubts if f not in flags)
        tr = transcripts.get(k)
        if text and tr is not None and tr.status == "ok":
            from stylebench.metrics.fidelity import transcript_error_rate

            er = transcript_error_rate(text, tr.text, lang)
            if not np.isnan(er):
                values["asr_text_er"] = er
        from stylebench.metrics.validity import blocking_flags, voicing_flags

        whole = blocking_flags(values, flags) + voicing_flags(values)
        flags.extend(f for f in whole if f not in flags)
    return out


def _finish_reply(p: dict[str, Any], tr: Any, lang: str) -> tuple[dict[str, float], list[str]]:
    """One reply's final values and quality flags: what its transcript says (language, syllables,
    doubts), then what every dimension measures on it (:meth:`Dimension.reply_values`, in
    registry order; their flags come first).

    A measurement that cannot be made (no voiced frame, no transcript) leaves its value out and
    says why in ``flags`` (``no_f0: ...``, ``no_transcript``); the score stage turns a missing
    value into an error for that dimension only, and so does a blocking flag
    (:mod:`stylebench.metrics.validity`).
    """
    from stylebench.metrics.dims.base import ReplyFrames, all_dims

    values = dict(p["values"])
    transcript_flags = _transcript_values(values, tr, lang)
    frames = ReplyFrames(
        wave=p["wave"],
        sr=p["sr"],
        tracks=(p["track"], p["praat_track"], p["swift_track"]),
        level_track=p["level_track"],
        frame_ms=p.get("frame_ms", 5.0),
        f0_ceil=p.get("f0_ceil"),
        measured=MappingProxyType(dict(values)),
        transcript=tr if tr is not None and tr.status == "ok" else None,
    )
    flags: list[str] = []
    for dim in all_dims():
        own, why = dim.reply_values(frames)
        values.update(own)
        flags.extend(why)
    return {n: float(v) for n, v in values.items()}, flags + transcript_flags


def _transcript_values(values: dict[str, float], tr: Any, lang: str) -> list[str]:
    """Add what the reply's transcript says to ``values`` (its language's probability, its
    confidence, its syllable count); returns the transcript's flags and doubts."""
    from stylebench.metrics import rate

    flags: list[str] = []
    if tr is None:
        return flags
    if tr.status != "ok":
        flags.append(f"no_transcript: {tr.error}")
        return flags
    from stylebench.metrics.validity import language_mismatch

    spoken = getattr(tr, "spoken_lang", "")
    if spoken:
        values["asr_declared_lang_p"] = float(tr.declared_lang_p)
        if language_mismatch(lang, spoken, tr.declared_lang_p):
            flags.append("language_mismatch")
    if getattr(tr, "mean_logprob", 0.0):
        values["asr_mean_logprob"] = float(tr.mean_logprob)
        values["asr_unsure_share"] = float(tr.unsure_word_share)
        values["asr_unsure_stretch"] = float(getattr(tr, "unsure_stretch_share", 0.0))
    from stylebench.metrics.validity import unknown_stretch

    if tr.words:
        values["asr_unknown_stretch"] = unknown_stretch(tr.words, lang)
    syl = rate.count_syllables(tr.text, lang)
    values["syllables"] = float(syl)
    flags += [f for f in tr.flags if f not in flags]
    if syl > 0:
        from stylebench.metrics.validity import transcript_doubts

        nuclei = values.get("nuclei")
        doubts = transcript_doubts(
            tr.text,
            lang,
            syl,
            values.get("active_s", 0.0),
            nuclei,
            asr_flags=tuple(tr.flags),
            unsure_word_share=getattr(tr, "unsure_word_share", 0.0),
            unsure_stretch_share=getattr(tr, "unsure_stretch_share", 0.0),
            unknown_stretch_share=values.get("asr_unknown_stretch", 0.0),
            mean_logprob=getattr(tr, "mean_logprob", 0.0),
        )
        flags += [f for f in doubts if f not in flags]
    else:
        flags.append("no_syllables: the transcript is empty")
    return flags


def _alignments(
    parts: dict[int, dict[str, Any]], backend: str | None
) -> dict[int, tuple[int, Any]]:
    """Per turn, the previous measured turn and their alignment over the speech spans
    (:func:`stylebench.metrics.alignment.align`: the cost is low when the two say the same words;
    the tempo is the second's seconds per second of the first), the pauses inside each span
    taken from the sample's speech detector's segments."""
    from stylebench.metrics.alignment import HOP_S, align, speech_frames

    def spectra(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        m, v = p.get("mfcc"), p["values"]
        if m is None or "span_start" not in v:
            return None
        first = int(v["span_start"] / HOP_S)
        seg = m[first : int(v["span_end"] / HOP_S) + 1]
        if len(seg) < 3:
            return None
        speech = speech_frames(len(seg), first * HOP_S, p.get("segments", {}).get(backend, ()))
        return seg, speech if speech.any() else np.ones(len(seg), bool)

    turns = sorted(parts)
    out = {}
    for prev, k in zip(turns, turns[1:], strict=False):
        a, b = spectra(parts[prev]), spectra(parts[k])
        if a is not None and b is not None:
            out[k] = prev, align(a[0], b[0], a[1], b[1])
    return out
