"""Emotion scores of a run, and which of them are human, probe or prosodic (the JSON block).

Emotion has no acoustic scale. A run's emotion samples get up to three kinds of score, each
labelled wherever it is reported:

- **prosodic** (always): the probe-free intensity index of :mod:`stylebench.metrics.prosody`,
  in JND units, computed from stored features. It is what the report's ``emotion`` cells hold.
- **probe** (``--emotion-probe emotion2vec``): the recogniser's probability of the target
  emotion per turn, scored with its own threshold (``--probe-delta``), with its saturation.
- **human** (after ``stylebench import-ratings``): the listening test's human VSP, in the
  report's ``human`` block; its per-pair majorities (``ratings_summary.json``) are the reference
  for each automatic score's agreement.

Agreement with the human majority, per (sample, pair) where the kept raters' majority chose one
turn: the automatic score says ``later`` when the later turn's score is strictly higher, else
``earlier``; percent agreement and Cohen's kappa are taken over those pairs (human ties left out,
and counted). The block's Markdown is :mod:`stylebench.report.sections.emotion`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stylebench.metrics.dims.base import dimension
from stylebench.records import TURNS, Key, ProbeRecord, RespondRecord, Sample
from stylebench.scoring.cells import (
    Thresholds,
    TurnScore,
    cell_dict,
    collect_samples,
    score_cells,
)

if TYPE_CHECKING:
    from stylebench.config import RunConfig

PROSODIC_LABEL = (
    "prosodic approximation: probe-free arousal index in JND units (pitch level, F0 spread, "
    "level, syllable-nuclei rate vs turn 1; sign by the emotion's arousal side); it does not "
    "tell which emotion is expressed"
)


@dataclass(frozen=True)
class ProbeScores:
    """The probe's per-turn scores of a run's emotion samples, scored with its own threshold."""

    turn_scores: tuple[TurnScore, ...]
    #: the ok turns' top probabilities (for the saturation check)
    top_probs: tuple[float, ...]
    thresholds: Thresholds


def probe_scores(
    samples: Sequence[Sample],
    replies: Mapping[Key, RespondRecord],
    probes: Mapping[Key, ProbeRecord],
    thresholds: Thresholds,
) -> ProbeScores:
    """:func:`probe_turn_scores` with the threshold they are scored against."""
    scores, tops = probe_turn_scores(samples, replies, probes)
    return ProbeScores(tuple(scores), tuple(tops), thresholds)


def probe_turn_scores(
    samples: Sequence[Sample],
    replies: Mapping[Key, RespondRecord],
    probes: Mapping[Key, ProbeRecord],
) -> tuple[list[TurnScore], list[float]]:
    """Per-turn probe scores (probability of the target emotion) and the ok turns' top probs,
    from the run's current reply and probe records."""
    scores, tops = [], []
    for s in samples:
        if not dimension(s.dim).probed:
            continue
        for k in TURNS:
            rep, rec = replies.get((s.id, k)), probes.get((s.id, k))
            value, error = None, None
            if rep is None or rep.status != "ok":
                error = "respond: " + (rep.error.splitlines()[0][:300] if rep else "no record")
            elif rec is None:
                error = "probe: not run for this reply"
            elif rec.status != "ok":
                error = "probe: " + rec.error.splitlines()[0][:300]
            else:
                value = float(rec.probs.get(s.emotion, 0.0))
                tops.append(rec.top_prob)
            scores.append(
                TurnScore(s.id, s.dim, s.direction, s.lang, k, value, error, (), s.emotion)
            )
    return scores, tops


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two equal-length label lists; ``None`` when chance agreement is 1."""
    if len(a) != len(b) or not a:
        raise ValueError("cohen_kappa needs two non-empty label lists of equal length")
    n = len(a)
    labels = sorted(set(a) | set(b))
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in labels)
    return None if pe >= 1.0 else (po - pe) / (1.0 - pe)


def agreement_with_humans(
    scores: Sequence[TurnScore], majority: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Percent agreement and Cohen's kappa of an automatic score with the human majority."""
    human = {(r["sample_id"], r["pair"]): r.get("majority") for r in majority}
    auto = {}
    for s in collect_samples(scores):
        for a, b in ((1, 2), (2, 3)):
            ta, tb = s.turns.get(a), s.turns.get(b)
            if ta and tb and ta.value is not None and tb.value is not None:
                auto[(s.sample_id, f"{a}-{b}")] = "later" if tb.value > ta.value else "earlier"
    keys = sorted(k for k in auto if human.get(k) in ("later", "earlier"))
    ties = sum(1 for k in auto if human.get(k) == "tie")
    if not keys:
        return {"n_pairs": 0, "n_human_ties": ties, "percent": None, "kappa": None}
    h, m = [str(human[k]) for k in keys], [auto[k] for k in keys]
    kappa = cohen_kappa(h, m)
    return {
        "n_pairs": len(keys),
        "n_human_ties": ties,
        "percent": round(100.0 * sum(x == y for x, y in zip(h, m, strict=True)) / len(keys), 2),
        "kappa": None if kappa is None else round(kappa, 4),
    }


def emotion_report_block(
    samples: Sequence[Sample],
    cfg: RunConfig,
    turn_scores: Sequence[TurnScore],
    *,
    probe: ProbeScores | None = None,
    majority: Sequence[Mapping[str, Any]] | None = None,
    exclude: Collection[str] = (),
) -> dict[str, Any]:
    """``{"emotion_scores": ...}`` for the report, or ``{}`` when no emotion sample was run.

    ``probe`` holds the probe's scores when it ran (``--emotion-probe``), ``majority`` the
    imported listening test's per-pair majorities; ``exclude`` the sample ids the relevance gate
    filtered out, which probe cells leave out as the main cells do.
    """
    from stylebench.metrics.emotion_probe import saturation

    emo = [s for s in samples if dimension(s.dim).probed]
    if not emo:
        return {}
    emo_dims = {s.dim for s in emo}
    prosodic = [t for t in turn_scores if t.dim in emo_dims]
    ec = cfg.emotion
    block: dict[str, Any] = {
        "sources": {
            "cells": "prosodic",
            "probe": "probe" if ec.emotion_probe != "none" else "not run (--emotion-probe none)",
            "human": "human (see the human block)" if majority is not None else "none imported",
        },
        "prosodic": {
            "label": PROSODIC_LABEL,
            "unit": "JND units",
            "threshold": cfg.score.emotion_delta,
        },
        "probe": None,
    }
    if majority is not None:
        block["prosodic"]["agreement_with_human"] = agreement_with_humans(prosodic, majority)
    if ec.emotion_probe != "none" and probe is not None:
        cells = score_cells(
            probe.turn_scores,
            thresholds=probe.thresholds,
            n_boot=cfg.score.n_boot,
            seed=cfg.decode.seed,
            exclude=exclude,
        )
        sat = saturation(list(probe.top_probs))
        block["probe"] = {
            "label": f"probe: {ec.emotion_probe} {ec.probe_model}, probability of the target "
            "emotion per turn",
            "unit": "probability",
            "threshold": ec.probe_delta,
            "cells": [cell_dict(c) for c in cells],
            "saturation": {
                "threshold": sat.threshold,
                "n_turns": sat.n_turns,
                "n_saturated": sat.n_saturated,
                "share": None if sat.share is None else round(sat.share, 4),
            },
        }
        if majority is not None:
            block["probe"]["agreement_with_human"] = agreement_with_humans(
                probe.turn_scores, majority
            )
    return {"emotion_scores": block}
