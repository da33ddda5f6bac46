"""Which per-frame pitch rule holds still under tempo and gain changes? The alternatives that
docs/metrics.md ("Three-tracker vote") compares, on the same copies as ``real_speech.py``.

For every clip (the corpus, or VStyle replies with ``--corpus vstyle``) the original and its
tempo (x0.8, x1.25) and gain (+-4 dB) copies are tracked once by pyworld, Praat and SwiftF0
(``stylebench.metrics.pitch``); each rule turns the three tracks into a per-reply mean, and the
change from the original to each copy (in semitones) should be 0. Printed per rule: the worst
|change| and how many copies move by 0.3 st or more, per corpus half when the manifest splits it.

    .venv/bin/python benchmarks/pitch_rules.py [--corpus vstyle] [--every 2] [--jobs 2]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import rule_bench
from real_speech_transforms import changes, has_rubberband, make_versions

LIMIT_ST = 0.3


def _mean(track: np.ndarray) -> float:
    v = track[track > 0]
    return float(np.mean(v)) if v.size >= 3 else math.nan


Rule = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], float]


def rules() -> dict[str, Rule]:
    """Per-frame rules: (pyworld, Praat, SwiftF0 tracks on one grid, each frame's level in dB)
    -> the reply's mean F0."""
    from stylebench.metrics import pitch

    def old(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return _mean(np.where(pitch.agreed_frames(a, b, edge=1), a, 0.0))

    def vote(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return _mean(pitch.trim_edges(pitch.majority_f0([a, b, c])))

    def all_three(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        stack = np.vstack([a, b, c])
        med = np.median(stack, axis=0)
        ok = (stack > 0).all(axis=0)
        near = np.abs(12 * np.log2(np.where(ok, stack, 1.0) / np.where(ok, med, 1.0))) <= 2.0
        return _mean(pitch.trim_edges(np.where(ok & near.all(axis=0), med, 0.0)))

    def vote_guard(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        t = pitch.trim_edges(pitch.majority_f0([a, b, c]))
        if (t > 0).sum() < 3:
            return math.nan
        lo, hi = pitch.speaker_f0_range([t])
        return _mean(np.where((t >= lo) & (t <= hi), t, 0.0))

    def chosen(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return _mean(pitch.drop_off_voice(pitch.trim_edges(pitch.majority_f0([a, b, c]))))

    def sub9(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return _mean(pitch.drop_off_voice(pitch.trim_edges(pitch.majority_f0([a, b, c])), 9.0))

    def median_st(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        t = pitch.drop_off_voice(pitch.trim_edges(pitch.majority_f0([a, b, c])))
        v = t[t > 0]
        return float(np.median(v)) if v.size >= 3 else math.nan

    def swift_arbiter(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        # a frame counts only when SwiftF0 is in its majority (SwiftF0 as the arbiter)
        maj = pitch.majority_f0([a, b, c])
        ok = (c > 0) & (maj > 0)
        near = np.abs(12 * np.log2(np.where(ok, c, 1.0) / np.where(ok, maj, 1.0))) <= 2.0
        return _mean(pitch.drop_off_voice(pitch.trim_edges(np.where(ok & near, maj, 0.0))))

    def octave_veto(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        # a frame goes when any tracker reads an octave (12 +- 2 st) above its majority
        maj = pitch.majority_f0([a, b, c])
        keep = maj > 0
        for x in (a, b, c):
            ok = keep & (x > 0)
            up = 12 * np.log2(np.where(ok, x, 1.0) / np.where(ok, maj, 1.0))
            keep &= ~(ok & (np.abs(up - 12.0) <= 2.0))
        return _mean(pitch.drop_off_voice(pitch.trim_edges(np.where(keep, maj, 0.0))))

    def weighted(power: float) -> Rule:
        # the vote's frames, each weighted by its amplitude (power 1: stylebench's score,
        # pitch.weighted_mean_f0) or by its energy (power 2)
        def rule(a: np.ndarray, b: np.ndarray, c: np.ndarray, level: np.ndarray) -> float:
            t = chosen_track(a, b, c)
            if (t > 0).sum() < 3:
                return math.nan
            if power == 1.0:
                return pitch.weighted_mean_f0(t, level)
            keep = t > 0
            w = 10 ** ((level[keep] - level[keep].max()) * power / 20)
            return float(np.sum(t[keep] * w) / np.sum(w))

        return rule

    def loud(drop_db: float) -> Rule:
        # the chosen frames within ``drop_db`` of the 90th percentile of their levels
        def rule(a: np.ndarray, b: np.ndarray, c: np.ndarray, level: np.ndarray) -> float:
            t = chosen_track(a, b, c)
            keep = t > 0
            if keep.sum() < 3:
                return math.nan
            return _mean(np.where(keep & (level >= np.percentile(level[keep], 90) - drop_db), t, 0))

        return rule

    def chosen_track(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return pitch.drop_off_voice(pitch.trim_edges(pitch.majority_f0([a, b, c])))

    def log_mean(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        v = chosen_track(a, b, c)
        v = v[v > 0]
        return float(np.exp(np.mean(np.log(v)))) if v.size >= 3 else math.nan

    three: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], float]] = {
        "pyworld+Praat agree, pyworld value (old)": old,
        "vote of three, no guard": vote,
        "all three voiced and agree": all_three,
        "vote, +-0.75 octave guard": vote_guard,
        "vote, subharmonics dropped (plain mean; stop 38)": chosen,
        "vote, frames 9 st under the median dropped": sub9,
        "vote, median instead of mean": median_st,
        "vote, only frames SwiftF0 agrees with": swift_arbiter,
        "vote, octave-above veto": octave_veto,
        "vote, mean of log F0": log_mean,
        "pyworld alone (plain mean)": lambda a, b, c: _mean(a),
        "Praat alone (plain mean)": lambda a, b, c: _mean(b),
        "SwiftF0 alone (plain mean)": lambda a, b, c: _mean(c),
    }
    out: dict[str, Rule] = {
        name: (lambda a, b, c, level, f=f: f(a, b, c)) for name, f in three.items()
    }
    out["vote, amplitude-weighted mean (chosen)"] = weighted(1.0)
    out["vote, energy-weighted mean"] = weighted(2.0)
    for drop in (10.0, 15.0, 20.0):
        out[f"vote, frames within {drop:g} dB of their 90th-percentile level"] = loud(drop)
    return out


def measure_clip(clip: dict[str, Any], cache: Path) -> tuple[str, str, dict[str, dict[str, float]]]:
    """Each rule's change (st) from the original to each tempo and gain copy. Runs in a worker."""
    import soundfile as sf

    from stylebench.metrics import pitch

    todo = [c for c in changes("rubberband" if has_rubberband() else "world") if c.dim != "pitch"]
    paths, _ = make_versions(clip, todo, cache)
    means: dict[str, dict[str, float]] = {}
    for name, path in paths.items():
        x, sr = sf.read(str(path), dtype="float64")
        tracks = (pitch.f0_track(x, sr), pitch.praat_f0_track(x, sr), pitch.swift_f0_track(x, sr))
        level = pitch.frame_levels_db(x, sr, tracks[0].size)
        means[name] = {r: f(*tracks, level) for r, f in rules().items()}
    out = {
        name: {
            r: 12 * math.log2(m[r] / means["orig"][r])
            if m[r] > 0 and means["orig"][r] > 0
            else math.nan
            for r in m
        }
        for name, m in means.items()
        if name != "orig"
    }
    return clip["id"], clip.get("split", ""), out


def main(argv: list[str] | None = None) -> int:
    return rule_bench.run(
        "pitch_rules",
        __doc__ or "",
        measure_clip,
        list(rules()),
        limit=LIMIT_ST,
        unit="st",
        argv=argv,
    )


if __name__ == "__main__":
    sys.exit(main())
