"""Speed: syllables per minute over the speech span; change in percent ``100*(b/a-1)``.

The paper's score counts the syllables of an ASR transcript (:mod:`stylebench.metrics.rate`).
Which estimate scores a sample is chosen once per sample (:func:`speed_key`), so one estimator
serves all three of its turns.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from stylebench.metrics.dims.base import (
    Dimension,
    ReplyFrames,
    ScoreContext,
    ScoredTurn,
    Shared,
    TurnValues,
    value_or_reason,
)
from stylebench.records import FeatureRecord, Sample

SOURCES = {"asr": "spm", "text": "text_spm", "nuclei": "nuclei_spm"}
#: the syllable count behind each per-turn rate
COUNT_KEYS = {"spm": "syllables", "text_spm": "text_syllables"}
#: a run's count is doubtful when its turns' undoubted counts differ over the same words
COUNT_CHANGED = "asr_count_changed_on_same_words"


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
    (:data:`stylebench.metrics.validity.DOUBT_FLAGS`), speech in another language than declared
    (``language_mismatch``: the transcript is a translation), a transcript that is not a faithful
    reading of the model's text channel (``asr_text_er`` > ``max_error``), or a
    syllables-per-nucleus ratio far from the other turns' (:func:`stylebench.metrics.validity.nuclei_outliers`:
    the same voice keeps that ratio; a loop does not). A transcript that is faithful to the text
    channel is vouched for: no other transcript test doubts it.

    A doubt matters only where a count does: a change between turns that say the same words
    shares one count (:func:`speed_plan`), and no doubt blocks it.
    """
    from stylebench.metrics.fidelity import is_faithful
    from stylebench.metrics.validity import DOUBT_FLAGS, nuclei_outliers

    out: dict[int, str] = {}
    vouched = {
        k
        for k, f in feats.items()
        if "asr_text_er" in f.values and is_faithful(f.values["asr_text_er"], max_error)
    }
    for k, f in feats.items():
        if "language_mismatch" in f.flags:
            out[k] = "language_mismatch"
        elif k in vouched:
            continue
        elif "asr_text_er" in f.values:
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
    return out


def same_words_runs(
    feats: Mapping[int, FeatureRecord], alone: Collection[int] = ()
) -> list[tuple[int, ...]]:
    """The sample's turns (``feats``' keys, in order) cut into runs of consecutive turns whose
    audio says the same words as the turn before (:func:`stylebench.metrics.validity.same_words`).

    A turn joins the run before it only when its alignment was made against that run's last turn
    (``dtw_turn_prev``; a record without it: the turn just before) and neither is in ``alone``
    (turns with no score of their own whatever the route: too short, not speech, cut off, no
    speech span).
    """
    from stylebench.metrics.validity import same_words

    runs: list[list[int]] = []
    prev: int | None = None
    for k in sorted(feats):
        v = feats[k].values
        if (
            prev is not None
            and k not in alone
            and prev not in alone
            and int(v.get("dtw_turn_prev", k - 1)) == prev
            and same_words(v)
        ):
            runs[-1].append(k)
        else:
            runs.append([k])
        prev = k
    return [tuple(r) for r in runs]


@dataclass(frozen=True)
class RunCount:
    """The syllable count a run of same-words turns shares, and whether it may be compared with
    other runs' counts (``doubt`` is ``None``) or not (why)."""

    count: float | None
    doubt: str | None


def run_count(
    run: Sequence[int], feats: Mapping[int, FeatureRecord], key: str, doubtful: Mapping[int, str]
) -> RunCount:
    """The count the turns of ``run`` share under rate ``key`` (``spm``: the transcripts'
    syllables, ``text_spm``: the text channels').

    The median of the counts of its turns that no test doubts (``doubtful``). Those must agree
    within :data:`stylebench.metrics.validity.SAME_CONTENT_SYL_TOL`: over the same words a count
    that changes more is the ASR's doing (a dropped or doubled phrase), and the run's count is
    doubtful (``count_changed_on_same_words``). With no undoubted count: the median of all, with
    its turns' doubts.
    """
    from stylebench.metrics.validity import SAME_CONTENT_SYL_TOL

    counts = {k: float(c) for k in run if (c := feats[k].values.get(COUNT_KEYS[key], 0.0)) > 0}
    trusted = [c for k, c in counts.items() if k not in doubtful]
    if trusted:
        changed = max(trusted) > (1.0 + SAME_CONTENT_SYL_TOL) * min(trusted)
        return RunCount(float(np.median(trusted)), COUNT_CHANGED if changed else None)
    if not counts:
        return RunCount(None, "no syllable count")
    why = ", ".join(sorted({doubtful[k] for k in run if k in doubtful}))
    return RunCount(float(np.median(list(counts.values()))), why)


@dataclass(frozen=True)
class SpeedPlan:
    """How one sample's speed is measured.

    Attributes:
        key: the per-turn rate (``spm``: transcripts, ``text_spm``: the model's text channel,
            ``nuclei_spm``: the ASR-free diagnostic).
        flags: the sample's flags (``speed_from_text``, ...).
        runs: its turns in runs that say the same words (:func:`same_words_runs`).
        counts: the count each run of two or more turns shares.
        doubtful: turns whose own transcript is doubtful, with why (:func:`doubtful_turns`);
            it unscores a turn that shares no count (a run of one) under ``key`` ``spm``.
    """

    key: str
    flags: tuple[str, ...]
    runs: tuple[tuple[int, ...], ...]
    counts: Mapping[tuple[int, ...], RunCount]
    doubtful: Mapping[int, str]


def speed_plan(
    feats: Mapping[int, FeatureRecord],
    source: str = "auto",
    max_error: float = 0.3,
    alone: Collection[int] = (),
) -> SpeedPlan:
    """Which rate estimate scores one sample's speed, which turns share a count, and which
    transcripts are doubtful.

    ``text`` and ``nuclei`` are used as asked, turn by turn. ``asr`` (the paper's definition)
    and ``auto``: turns that say the same words as the turn before share one count
    (:func:`same_words_runs`, :func:`run_count`), so no transcript doubt blocks the change
    between them; a turn alone (other words than its neighbours) is counted from its own
    transcript, unscored when that is doubtful. When some count that a change between
    different words needs is doubtful, ``auto`` scores the whole sample from the text channel
    instead (flag ``speed_from_text``: one estimator per sample), if every turn has one that is
    itself plausible (no ``text_*`` doubt flag; a faithful transcript corroborates its text, so
    an intensity-peak count that disagrees with it does not rule it out), and no transcript is
    doubted only for disagreeing with a text whose syllable count it does not corroborate
    (:func:`counts_agree`: with nothing to tell which of the two is wrong, neither scores).

    ``alone`` are turns with no score of their own whatever the route (a blocking flag, no span).

    Raises:
        ValueError: an unknown source.
    """
    if source in ("text", "nuclei"):
        singles: tuple[tuple[int, ...], ...] = tuple((k,) for k in sorted(feats))
        return SpeedPlan(SOURCES[source], (f"speed_from_{source}",), singles, {}, {})
    if source not in ("auto", "asr"):
        raise ValueError(f"speed source must be auto, asr, text or nuclei, got {source!r}")
    runs: tuple[tuple[int, ...], ...] = tuple(same_words_runs(feats, alone))
    doubtful = doubtful_turns(feats, max_error)
    counts = {r: run_count(r, feats, "spm", doubtful) for r in runs}
    # a count matters only between runs (a run's own turns compare by their spans), and for a
    # turn alone, which has only its own; a run with no count at all (no transcript: --asr none)
    # has no rate for its first turn
    doubt = (
        any(r[0] in doubtful for r in runs if len(r) == 1)
        or any(counts[r].count is None for r in runs if len(r) > 1)
        or (len(runs) > 1 and any(counts[r].doubt for r in runs if len(r) > 1))
    )
    if source == "auto" and doubt and _text_can_score(feats, doubtful, max_error):
        text_counts = {r: run_count(r, feats, "text_spm", {}) for r in runs}
        return SpeedPlan("text_spm", ("speed_from_text",), runs, text_counts, {})
    return SpeedPlan("spm", (), runs, counts, doubtful)


def _text_can_score(
    feats: Mapping[int, FeatureRecord], doubtful: Mapping[int, str], max_error: float
) -> bool:
    from stylebench.metrics.fidelity import is_faithful
    from stylebench.metrics.validity import TEXT_DOUBT_FLAGS

    def plausible(f: FeatureRecord) -> bool:
        doubts = TEXT_DOUBT_FLAGS & set(f.flags)
        if "asr_text_er" in f.values and is_faithful(f.values["asr_text_er"], max_error):
            doubts -= {"text_nuclei_mismatch"}
        return "text_spm" in f.values and not doubts

    uncorroborated = any(
        why == "asr_text_mismatch" and not counts_agree(feats[k]) for k, why in doubtful.items()
    )
    return all(plausible(f) for f in feats.values()) and not uncorroborated


def speed_key(
    feats: Mapping[int, FeatureRecord], source: str = "auto", max_error: float = 0.3
) -> tuple[str, tuple[str, ...], dict[int, str]]:
    """The rate estimate that scores one sample's speed (:func:`speed_plan`), its flags, and the
    turns a doubtful transcript leaves unscored: a turn that shares no count with a neighbour
    under ``spm``, or every turn of a run whose shared count is doubtful where another run's
    turns need it (those keep the change within their run)."""
    plan = speed_plan(feats, source, max_error)
    out: dict[int, str] = {}
    if plan.key == "spm":
        for r in plan.runs:
            if len(r) == 1 and r[0] in plan.doubtful:
                out[r[0]] = plan.doubtful[r[0]]
            elif len(r) > 1 and len(plan.runs) > 1 and (why := plan.counts[r].doubt):
                out.update({k: why for k in r})
    return plan.key, plan.flags, out


def pair_routes(turn_scores: Sequence[ScoredTurn]) -> tuple[int, int, int]:
    """How many consecutive turn pairs (1-2, 2-3) of the scored turns were measured from the
    aligned audio (both turns share a count: the same words), how many from each turn's own
    count (other words), and how many have no change."""
    by: dict[str, dict[int, ScoredTurn]] = {}
    for t in turn_scores:
        by.setdefault(t.sample_id, {})[t.turn] = t
    same = counted = unscored = 0
    for turns in by.values():
        for a, b in zip(sorted(turns), sorted(turns)[1:], strict=False):
            ta, tb = turns[a], turns[b]
            if ta.value is None or tb.value is None:
                unscored += 1
            elif a in tb.same_words:
                same += 1
            elif ta.cross_error or tb.cross_error:
                unscored += 1
            else:
                counted += 1
    return same, counted, unscored


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
    blocking: ClassVar[tuple[str, ...]] = ("too_short", "not_speech", "reply_truncated")
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
            "the first-to-last speech span; turns that say the same words as the turn before "
            "(DTW of their spectra) share one count and change by their aligned tempo"
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
        same, counted, unscored = pair_routes(turn_scores)
        routes = (
            f"speed routes: {same} turn pairs say the same words (the change is the ratio of "
            f"their speech spans, one shared syllable count), {counted} say other words (each "
            f"turn's own count), {unscored} unscored"
        )
        if source != "auto":
            return [f"speed source: {source} for all {len(ids)} samples (--speed-source)", routes]
        by_text = {t.sample_id for t in turn_scores if "speed_from_text" in t.flags}
        mismatch = {t.sample_id for t in turn_scores if t.error and "asr_text_mismatch" in t.error}
        return [
            f"speed source (auto): {len(ids - by_text)} samples counted from the ASR transcript, "
            f"{len(by_text)} from the model's text channel because a count that a change between "
            f"different words needs was doubtful (flagged or missing); {len(mismatch)} samples "
            f"with a turn unscored because its transcript and text channel disagree (WER/CER > "
            f"{ctx.get('transcript_max_error'):g})",
            routes,
        ]

    def change(self, a: float, b: float) -> float:
        return 100.0 * (b / a - 1.0)

    def turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        """Each turn's rate (:func:`speed_plan`): turns that say the same words as a neighbour
        share a count (:class:`~stylebench.metrics.dims.base.Shared`: their changes are span
        ratios); a turn alone is counted from its own transcript (or text channel)."""
        alone = {
            k
            for k, f in features.items()
            if any(flag in f.flags for flag in self.blocking) or not f.values.get("span_s", 0) > 0
        }
        plan = speed_plan(features, ctx.get("speed_source"), ctx.get("transcript_max_error"), alone)
        values: TurnValues = {}
        for run in plan.runs:
            if len(run) == 1:  # its own count: its transcript's doubts apply
                f = features[run[0]]
                own = value_or_reason(f.values, f.flags, plan.key, self.blocking)
                doubt = plan.doubtful.get(run[0])
                values[run[0]] = _doubt_reason(doubt) if doubt and not isinstance(own, str) else own
                continue
            rc = plan.counts[run]
            if rc.count is None:
                for k in run:
                    f = features[k]
                    own = value_or_reason(f.values, f.flags, plan.key, self.blocking)
                    values[k] = own if isinstance(own, str) else _doubt_reason(rc.doubt or "")
                continue
            cross = _doubt_reason(rc.doubt) if rc.doubt is not None and len(plan.runs) > 1 else None
            for k, spm in zip(run, shared_rates(run, features, rc.count), strict=True):
                values[k] = Shared(spm, run, cross)
        return values, plan.flags


def shared_rates(
    run: Sequence[int], feats: Mapping[int, FeatureRecord], count: float
) -> list[float]:
    """The rates of a run of turns that say the same words: its first turn's ``count`` over its
    speech span (syllables per minute, as the paper's rate), then each next turn's rate divided
    by its aligned tempo against the turn before (``dtw_tempo_prev``: seconds per second of the
    previous turn over the words they share; :func:`stylebench.metrics.alignment.align`). So the
    change between two of them is their tempo ratio: no transcript and no span edge enters it.
    A record without the tempo (features before alignment spec 2) takes its own span instead."""
    out: list[float] = []
    for k in run:
        v = feats[k].values
        tempo = v.get("dtw_tempo_prev")
        if out and tempo is not None and tempo > 0:
            out.append(out[-1] / tempo)
        else:
            out.append(count * 60.0 / v["span_s"])
    return out


def _doubt_reason(why: str) -> str:
    """The unscored reason of a doubtful count: a language mismatch has its own words."""
    from stylebench.metrics.validity import REASONS

    if why == "language_mismatch":
        return REASONS["language_mismatch"]
    return f"{REASONS['asr_doubtful']} ({why})"
