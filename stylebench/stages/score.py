"""score and report: turn feature records into per-turn style scores, cells and report files.

Scoring reads only stored records; it never calls the model, the ASR or the feature extractors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from stylebench.metrics.fidelity import DEFAULT_MAX_ERROR, is_faithful
from stylebench.records import Sample
from stylebench.scoring import Cell, Thresholds, TurnScore, score_cells
from stylebench.store import RunStore

#: which feature value is the style score of each dimension
SCORE_VALUE = {
    "pitch": {"guarded_mean": "f0_mean_guarded", "mean": "f0_mean", "median": "f0_median"},
    "volume": "rms_active",
    "speed": "spm",
}
#: flags that mark a measurement as doubtful for a given dimension
DIM_FLAGS = {
    "pitch": ("f0_octave_suspect", "f0_extractors_disagree", "praat_unvoiced"),
    "speed": (
        "asr_repetition",
        "asr_empty",
        "asr_redecoded",
        "asr_low_confidence",
        "rate_asr_nuclei_disagree",
    ),
    "volume": (),
    "emotion": ("f0_octave_suspect", "f0_extractors_disagree"),  # the prosodic index uses F0
}


#: transcript flags that make the ASR syllable count untrustworthy for a whole sample
ASR_UNRELIABLE = frozenset(
    {
        "asr_empty",
        "asr_repetition",
        "asr_redecoded",
        "asr_low_confidence",
        "rate_asr_nuclei_disagree",
    }
)
SPEED_SOURCES = {"asr": "spm", "text": "text_spm", "nuclei": "nuclei_spm"}


def value_key(dim: str, pitch_stat: str) -> str:
    key = SCORE_VALUE[dim]
    return key[pitch_stat] if isinstance(key, dict) else key


def speed_key(
    feats: Sequence[Any], source: str = "auto", max_error: float = DEFAULT_MAX_ERROR
) -> tuple[str, tuple[str, ...]]:
    """Which rate estimate scores one sample's speed, and the flags that say so.

    ``asr`` (the paper's definition), ``text`` (syllables of the model's own text channel) and
    ``nuclei`` (ASR-free) are used as asked. ``auto`` uses the ASR rate unless a turn of the
    sample has no transcript rate, an unreliable transcript (:data:`ASR_UNRELIABLE`), or a
    transcript whose error rate against the model's text channel exceeds ``max_error``
    (``asr_text_er``, :mod:`stylebench.metrics.fidelity`); then, when every turn has a
    text-channel rate, the whole sample is scored from the text channel (flag
    ``speed_from_text``, plus ``asr_text_mismatch`` when a mismatch was among the reasons), so
    that one estimator is used for all three turns of a sample.
    """
    if source in SPEED_SOURCES:
        return SPEED_SOURCES[source], () if source == "asr" else (f"speed_from_{source}",)
    if source != "auto":
        raise ValueError(f"speed source must be auto, asr, text or nuclei, got {source!r}")
    ok = [f for f in feats if f is not None and f.status == "ok"]
    mismatch = any(not is_faithful(f.values.get("asr_text_er", math.nan), max_error) for f in ok)
    unreliable = mismatch or any("spm" not in f.values or ASR_UNRELIABLE & set(f.flags) for f in ok)
    if ok and unreliable and all("text_spm" in f.values for f in ok):
        return "text_spm", ("speed_from_text",) + (("asr_text_mismatch",) if mismatch else ())
    return "spm", ()


def collect_turn_scores(
    store: RunStore,
    samples: Sequence[Sample],
    features: dict[tuple[str, int], Any],
    pitch_stat: str = "guarded_mean",
    speed_source: str = "auto",
    max_error: float = DEFAULT_MAX_ERROR,
) -> list[TurnScore]:
    """One :class:`TurnScore` per (sample, turn); a failure anywhere upstream becomes its error."""
    replies = store.load("respond")
    out: list[TurnScore] = []
    for s in samples:
        extra: tuple[str, ...] = ()
        if s.dim == "speed":
            vkey, extra = speed_key(
                [features.get((s.id, k)) for k in (1, 2, 3)], speed_source, max_error
            )
        elif s.dim == "emotion":  # prosodic intensity vs turn 1 (stylebench.emotion)
            from stylebench.emotion import prosodic_by_turn

            vkey, emo = "prosodic_intensity", prosodic_by_turn(s, features)
        else:
            vkey = value_key(s.dim, pitch_stat)
        for k in (1, 2, 3):
            value, error, flags = None, None, ()
            rep = replies.get((s.id, k))
            feat = features.get((s.id, k))
            if rep is None:
                error = "respond: no record (run not finished)"
            elif rep.status != "ok":
                error = "respond: " + rep.error.splitlines()[0][:300]
            elif feat is None:
                error = "features: not computed yet (run `stylebench score`)"
            elif feat.status != "ok":
                error = "features: " + feat.error.splitlines()[0][:300]
            elif s.dim == "emotion" and isinstance(emo[k], str):
                error = emo[k]
            elif s.dim == "emotion":
                value = emo[k]
                flags = tuple(f for f in feat.flags if f in DIM_FLAGS["emotion"])
            elif vkey not in feat.values:
                why = [f for f in feat.flags if f.startswith(("no_", "asr_empty"))]
                error = f"{vkey} unavailable: " + ("; ".join(why) or "not measured")
            else:
                value = feat.values[vkey]
                flags = tuple(f for f in feat.flags if f in DIM_FLAGS.get(s.dim, ())) + extra
            out.append(
                TurnScore(s.id, s.dim, s.direction, s.lang, k, value, error, flags, s.emotion)
            )
    return out


def write_reports(
    store: RunStore,
    meta: Any,
    cells: Sequence[Cell],
    turn_scores: Sequence[TurnScore],
    *,
    plot: bool = True,
    exclude: Collection[str] = (),
) -> dict[str, Any]:
    """Write report.json / report.md / report.csv (and trajectories.png) into the run folder.

    Pass the same ``exclude`` as to :func:`score_run` so per-turn means and plots count the same
    samples as the cells.
    """
    from stylebench import report as rp

    report = rp.build_report(meta, cells, turn_scores, exclude=exclude)
    outputs = {
        "report.json": rp.to_json(report),
        "report.md": rp.to_markdown(report),
        "report.csv": rp.to_csv(report),
    }
    for name, text in outputs.items():
        tmp = store.root / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, store.root / name)
    if plot:
        try:
            rp.plot_trajectories(
                turn_scores, store.root / "trajectories.png", title=meta.model, exclude=exclude
            )
        except ImportError:
            pass  # matplotlib is the optional [plot] extra; the tables are complete without it
        except ValueError:
            pass  # nothing to plot: every sample failed turn 1 or was filtered out (--filter-mrd)
    return report


def score_run(
    turn_scores: Sequence[TurnScore],
    thresholds: Thresholds,
    n_boot: int,
    seed: int,
    *,
    exclude: Collection[str] = (),
) -> list[Cell]:
    """Score every cell; ids in ``exclude`` (e.g. ``--filter-mrd``) are counted nowhere."""
    return score_cells(
        turn_scores, thresholds=thresholds, n_boot=n_boot, seed=seed, exclude=exclude
    )


def report_path(store: RunStore, fmt: str) -> Path:
    return store.root / {"md": "report.md", "json": "report.json", "csv": "report.csv"}[fmt]
