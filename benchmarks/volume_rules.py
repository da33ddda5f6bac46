"""Which set of samples should the volume RMS be taken over, so that only a gain change moves it?
The alternatives docs/metrics.md ("Volume: a relative gate") compares, on ``real_speech.py``'s copies.

For every clip (the corpus, or VStyle replies with ``--corpus vstyle``) the original and its
tempo (x0.8, x1.25), gain (+-4 dB) and pitch (+-2 st, loudness matched) copies go through the same
speech detection as ``stylebench run`` (Silero, grown over the three-tracker voicing). Each rule
turns a reply into an RMS level; a tempo or pitch copy should read 0 dB against the original and a
gain copy its gain. Printed per rule: the worst |error| and how many copies are off by the
volume threshold (1 dB) or more, per corpus half when the manifest splits it.

    .venv/bin/python benchmarks/volume_rules.py [--corpus vstyle] [--every 2] [--jobs 2]
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

LIMIT_DB = 1.0

Rule = Callable[[np.ndarray, int, dict[str, np.ndarray], np.ndarray], float]


def _db(power: float) -> float:
    return 10.0 * math.log10(power) if power > 0 else math.nan


def rules() -> dict[str, Rule]:
    """(wave, sample rate, per-sample masks, voted voicing per 5 ms frame) -> the reply's level in
    dB. Masks: ``"mask"``, inside the VAD's segments; ``"span"``, from the first to the last
    speech second (the speed denominator's span)."""
    from stylebench.metrics import energy

    def masked(x: np.ndarray, sr: int, ms: dict[str, np.ndarray], v: np.ndarray) -> float:
        m = ms["mask"]
        return _db(float(np.mean(x[m] ** 2))) if m.any() else math.nan

    def voiced(x: np.ndarray, sr: int, ms: dict[str, np.ndarray], v: np.ndarray) -> float:
        vm = np.repeat(v, int(round(0.005 * sr)))[: x.size]
        vm = np.pad(vm, (0, x.size - vm.size))
        return _db(float(np.mean(x[vm] ** 2))) if vm.sum() >= 0.5 * sr else math.nan

    def gated(drop_db: float, win_s: float, where: str) -> Rule:
        def rule(x: np.ndarray, sr: int, ms: dict[str, np.ndarray], v: np.ndarray) -> float:
            try:
                r = energy.gated_rms(x, sr, mask=ms.get(where), drop_db=drop_db, window_s=win_s)
            except ValueError:
                return math.nan
            return 20.0 * math.log10(r)

        return rule

    def top(drop_db: float, win_s: float, q: float) -> Rule:
        def rule(x: np.ndarray, sr: int, ms: dict[str, np.ndarray], v: np.ndarray) -> float:
            win = int(round(win_s * sr))
            hop = max(1, win // 4)
            if x.size < win:
                return math.nan
            starts = np.arange(0, x.size - win + 1, hop)
            csum = np.concatenate([[0.0], np.cumsum(x * x)])
            power = (csum[starts + win] - csum[starts]) / win
            ref = np.percentile(power, q)
            return _db(float(np.mean(power[power >= ref * 10 ** (-drop_db / 10)])))

        return rule

    out: dict[str, Rule] = {
        "inside the VAD's segments (rms spec 1)": masked,
        "voted voiced frames": voiced,
    }
    for q in (90.0, 95.0):
        for drop in (20.0, 25.0, 30.0):
            out[f"file, 100 ms frames within {drop:g} dB of p{q:g}"] = top(drop, 0.1, q)
    for where in ("mask", "span", "file"):
        for win in (0.025, 0.1, 0.4):
            for drop in (10.0, 15.0, 20.0):
                chosen = " (chosen)" if (where, win, drop) == ("file", 0.1, 20.0) else ""
                label = f"{where}, {win * 1000:g} ms frames gated {drop:g} dB below{chosen}"
                out[label] = gated(drop, win, where)
    return out


def measure_clip(clip: dict[str, Any], cache: Path) -> tuple[str, str, dict[str, dict[str, float]]]:
    """Each rule's error (dB) on each copy: measured change minus the gain applied."""
    import soundfile as sf

    from stylebench.metrics import pitch, vad

    todo = changes("rubberband" if has_rubberband() else "world")
    applied = {c.name: (c.applied if c.dim == "volume" else 0.0) for c in todo}
    paths, _ = make_versions(clip, todo, cache)
    levels: dict[str, dict[str, float]] = {}
    for name, path in paths.items():
        x, sr = sf.read(str(path), dtype="float64")
        tracks = [pitch.f0_track(x, sr), pitch.praat_f0_track(x, sr), pitch.swift_f0_track(x, sr)]
        voiced = pitch.voted_voiced(tracks)
        try:
            span = vad.speech_span(x, sr, backend="silero", voiced=voiced, voiced_frame_s=0.005)
        except ValueError:
            levels[name] = {r: math.nan for r in rules()}
            continue
        inside = np.zeros(x.size, dtype=bool)
        inside[int(round(span.start * sr)) : int(round(span.end * sr))] = True
        ms = {"mask": vad.active_mask(span, x.size, sr), "span": inside}
        levels[name] = {r: f(x, sr, ms, voiced) for r, f in rules().items()}
    out = {
        name: {r: lv[r] - levels["orig"][r] - applied[name] for r in lv}
        for name, lv in levels.items()
        if name != "orig"
    }
    return clip["id"], clip.get("split", ""), out


def main(argv: list[str] | None = None) -> int:
    return rule_bench.run(
        "volume_rules",
        __doc__ or "",
        measure_clip,
        list(rules()),
        limit=LIMIT_DB,
        unit="dB",
        argv=argv,
    )


if __name__ == "__main__":
    sys.exit(main())
