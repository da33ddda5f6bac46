"""Speed: syllables per minute over the speech span; change in percent ``100*(b/a-1)``.

The paper's score counts the syllables of an ASR transcript (:mod:`stylebench.metrics.rate`).
Which estimate scores a sample is chosen once per sample (:func:`speed_key`), so one estimator
serves all three of its turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from stylebench.metrics.dims.base import (
    Dimension,
    ReplyFrames,
    ScoreContext,
    ScoredTurn,
    TurnValues,
    value_or_reason,
)
from stylebench.records import FeatureRecord, Sample

SOURCES = {"asr": "spm", "text": "text_spm", "nuclei": "nuclei_spm"}


def counts_agree(f: FeatureRecord) -> bool:
    """The transcript counts about as many syllables as a plausible text channel (within
    :data:`stylebench.metrics.validity.TEXT_COUNT_TOL`, or by 1): the text is corroborated as a
    record of what was said even where the words differ, so it may score the sample."""
    from stylebench.metrics.validity import TEXT_COUNT_TOL, TEXT_DOUBT_FLAGS

    syl, text = f.values.get("syllables"), f.values.get("text_syllables")
    if syl is None or not text or TEXT_DOUBT_FLAGS & set(f.flags):
        return False
    return abs(syl - text) <= max(1.0, TEXT_COUNT_TOL * text)


def doubtful_turns(feats: Mapping[int, FeatureRecord], max_error: float = 0.3) -> dict[int, str]:
    """Turns whose transcript cannot be trusted to count syllables, each with why.

    A turn is doubtful when it has no transcript rate, a doubt flag
    (:data:`stylebench.metrics.validity.DOUBT_FLAGS`), a transcript that is not a faithful reading
    of the model's text channel (``asr_text_er`` > ``max_error``), or a syllables-per-nucleus
    ratio far from the other turns' (:func:`stylebench.metrics.validity.nuclei_outliers`: the
    same voice saying similar content keeps that ratio; a loop does not), or, next to a turn
    whose audio says the same words (an ASR-free DTW test), a syllable count that changed
    (:func:`stylebench.metrics.validity.count_changed`: a dropped phrase).
    A transcript that is faithful to the text channel is vouched for: no other test doubts it,
    except the same-words count. Faithful means a word error rate up to ``max_error``, and a few
    words misheard in one turn and not the next move the count, and with it the rate, by more
    than the speed threshold while the audio says the same words at the same pace (the
    ``neutral`` row on Piper speech: 34, 31 and 35 syllables for one text read three times,
    a 13% "speed change" that was not there). :func:`speed_key` then scores the sample from the
    text channel where it is plausible.
    """
    from stylebench.metrics.fidelity import is_faithful
    from stylebench.metrics.validity import DOUBT_FLAGS, count_changed, nuclei_outliers

    out: dict[int, str] = {}
    vouched = {
        k
        for k, f in feats.items()
        if "asr_text_er" in f.values and is_faithful(f.values["asr_text_er"], max_error)
    }
    for k, f in feats.items():
        if k in vouched:
            continue
        if "asr_text_er" in f.values:
            out[k] = "asr_text_mismatch"
        elif "spm" not in f.values:
            out[k] = "no transcript rate"
        elif DOUBT_FLAGS & set(f.flags):
            out[k] = ", ".join(sorted(DOUBT_FLAGS & set(f.flags)))
    ratios = {
        k: f.values["syllables"] / f.values["nuclei"]
        for k, f in feats.items()
        if k not in out
        and k not in vouched
        and f.values.get("nuclei", 0) > 0
        and "syllables" in f.values
    }
    for k in nuclei_outliers(ratios):
        out[k] = "asr_nuclei_outlier"
    turns = sorted(feats)
    for prev, k in zip(turns, turns[1:], strict=False):
        if count_changed(feats[prev].values, feats[k].values):
            for t in (prev, k):
                out.setdefault(t, "asr_count_changed_on_same_words")
    return out


def speed_key(
    feats: Mapping[int, FeatureRecord], source: str = "auto", max_error: float = 0.3
) -> tuple[str, tuple[str, ...], dict[int, str]]:
    """Which rate estimate scores one sample's speed, the flags that say so, and the turns left
    unscored.

    ``text`` (syllables of the model's own text channel) and ``nuclei`` (ASR-free, a labelled
    diagnostic) are used as asked. ``asr`` (the paper's definition) and ``auto`` use the
    transcript rate of every turn that is not doubtful (:func:`doubtful_turns`). When a turn's
    transcript is doubted by an ASR-side test (a loop, low confidence, a re-decode, the wrong
    script, an implausible rate, a nuclei or same-words count mismatch), ``auto`` scores the whole
    sample from the text channel if every turn has one that is itself plausible (no ``text_*``
    doubt flag: right script, a human rate, a count near the ASR-free nuclei count; flag
    ``speed_from_text``: one estimator per sample, never mixed across turns). A transcript doubted
    only because its words differ from the text channel's (``asr_text_mismatch``) is replaced by
    that text only where the two count about the same syllables (:func:`counts_agree`); else,
    with nothing to tell which of the two is wrong, the turn is unscored. Otherwise, and
    always under ``asr``, the doubtful turns are unscored with their reason.
    """
    if source in ("text", "nuclei"):
        return SOURCES[source], (f"speed_from_{source}",), {}
    if source not in ("auto", "asr"):
        raise ValueError(f"speed source must be auto, asr, text or nuclei, got {source!r}")
    doubtful = doubtful_turns(feats, max_error)
    if not doubtful:
        return "spm", (), {}
    from stylebench.metrics.fidelity import is_faithful
    from stylebench.metrics.validity import TEXT_DOUBT_FLAGS

    def text_plausible(f: FeatureRecord) -> bool:
        # a text channel that a faithful transcript reads is corroborated as what was said, so
        # an intensity-peak count that disagrees with it (smooth synthetic speech has few
        # peaks) does not rule it out; script and rate still do
        doubts = TEXT_DOUBT_FLAGS & set(f.flags)
        if "asr_text_er" in f.values and is_faithful(f.values["asr_text_er"], max_error):
            doubts -= {"text_nuclei_mismatch"}
        return "text_spm" in f.values and not doubts

    text_ok = all(text_plausible(f) for f in feats.values())
    # a transcript doubted only because its words differ from the text channel's: either may be
    # the wrong one (a real model's text and speech can differ), so the text may replace it only
    # where the two count about the same syllables (the text is corroborated as what was said)
    uncorroborated = any(
        why == "asr_text_mismatch" and not counts_agree(feats[k]) for k, why in doubtful.items()
    )
    if source == "auto" and text_ok and not uncorroborated:
        return "text_spm", ("speed_from_text",), {}
    return "spm", (), doubtful


class Speed(Dimension):
    name: ClassVar[str] = "speed"
    unit: ClassVar[str] = "%"
    words: ClassVar[dict[str, str]] = {
        "score": "syllables/min",
        "change": "percent",
        "svd": "% of SPM",
    }
    threshold_field: ClassVar[str] = "speed_pct"
    default_threshold: ClassVar[float] = 5.0
    flags: ClassVar[tuple[str, ...]] = ("vad_energy_fallback",)
    blocking: ClassVar[tuple[str, ...]] = (
        "too_short",
        "not_speech",
        "reply_truncated",
        "language_mismatch",
    )
    threshold_help: ClassVar[str] = "speed threshold in percent"
    change_is_relative: ClassVar[bool] = True
    step: ClassVar[tuple[str, float]] = ("rate", 1.25)
    question_text: ClassVar[tuple[str, str]] = (
        "Which turn is spoken faster?",
        "Speaking speed: 1 = very slow, 5 = very fast",
    )
    check_levels: ClassVar[tuple[str, tuple[float, float, float]]] = ("rate", (0.75, 1.0, 1.4))
    caption_en: ClassVar[tuple[str, str, str]] = ("the pace", "faster", "slower")
    caption_zh: ClassVar[tuple[str, str, str]] = ("语速", "快", "慢")
    order: ClassVar[int] = 2
    caption_prompt: ClassVar[str] = "speaking rate (pace)"
    settings: ClassVar[Mapping[str, Any]] = {"speed_source": "auto", "transcript_max_error": 0.3}

    def extractor(self, cfg: Any) -> str:
        return (
            "syllables per minute: transcript syllables (CMU dict + rule / Han characters) over "
            "the first-to-last speech span"
            + (
                "; syllable-nuclei rate (an intensity-peak count that under-reads tempo changes by about half on real speech: a rough proxy, not the paper's score)"
                if cfg.measure.speed_source == "nuclei"
                else ""
            )
        )

    def reply_values(self, frames: ReplyFrames) -> tuple[dict[str, float], list[str]]:
        """The transcript rate (``spm``: the transcript's syllables per minute of the speech
        span; the paper's score), the same syllables over the first-to-last word span
        (``spm_words``) and, a diagnostic, its ratio to the syllable-nuclei rate. None without
        syllables or a speech span (the transcript's and the VAD's flags say why)."""
        from stylebench.metrics import rate

        syl, span = frames.measured.get("syllables", 0.0), frames.measured.get("span_s")
        if syl <= 0 or span is None:
            return {}, []
        values = {"spm": rate.syllables_per_minute(int(syl), span)}
        words = frames.transcript.words if frames.transcript is not None else ()
        if words:
            w_span = words[-1][2] - words[0][1]
            if w_span > 0:
                values["spm_words"] = rate.syllables_per_minute(int(syl), w_span)
        if frames.measured.get("nuclei_spm", 0) > 0:  # the nuclei rate does not follow tempo
            values["spm_nuclei_ratio"] = values["spm"] / frames.measured["nuclei_spm"]
        return values, []

    def run_notes(self, ctx: ScoreContext, turn_scores: Sequence[ScoredTurn]) -> list[str]:
        """Which rate estimate scored how many samples, and why."""
        ids = {t.sample_id for t in turn_scores}
        source = ctx.get("speed_source")
        if not ids:
            return []
        if source == "nuclei":
            return [
                f"speed source: nuclei for all {len(ids)} samples (--speed-source nuclei): an "
                "ASR-free count of loudness peaks, NOT the paper's syllable rate; on real speech it "
                "followed a x1.25 tempo change only about halfway (docs/metrics.md), so read these "
                "speed cells as a diagnostic"
            ]
        if source != "auto":
            return [f"speed source: {source} for all {len(ids)} samples (--speed-source)"]
        by_text = {t.sample_id for t in turn_scores if "speed_from_text" in t.flags}
        mismatch = {t.sample_id for t in turn_scores if t.error and "asr_text_mismatch" in t.error}
        return [
            f"speed source (auto): {len(ids - by_text)} samples from the ASR transcript, "
            f"{len(by_text)} from the model's text channel because an ASR-side test doubted a "
            f"turn's transcript (flagged or missing); {len(mismatch)} samples with a turn unscored "
            f"because its transcript and text channel disagree (WER/CER > "
            f"{ctx.get('transcript_max_error'):g})"
        ]

    def change(self, a: float, b: float) -> float:
        return 100.0 * (b / a - 1.0)

    def turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        from stylebench.metrics.validity import REASONS

        key, extra, doubtful = speed_key(
            features, ctx.get("speed_source"), ctx.get("transcript_max_error")
        )
        values: TurnValues = {}
        for k, f in features.items():
            values[k] = value_or_reason(f.values, f.flags, key, self.blocking)
            if k in doubtful and not isinstance(values[k], str):
                values[k] = f"{REASONS['asr_doubtful']} ({doubtful[k]})"
        return values, extra
