"""The trajectory plot: mean change per turn relative to turn 1, one panel per dim."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from stylebench.metrics.dims.base import dimension
from stylebench.records import DIMS, DIRECTIONS
from stylebench.scoring.cells import TurnScore, collect_samples, pair_values, perceptual_change


class NothingToPlot(ValueError):
    """No sample has a turn-1 score (all failed, or all were filtered out by the gate)."""


def trajectories(
    turn_scores: Sequence[TurnScore], exclude: Collection[str]
) -> dict[str, dict[tuple[str, str], dict[int, list[float]]]]:
    """Per dim and (direction, lang): per-turn changes relative to each sample's own turn 1."""
    out: dict[str, dict[tuple[str, str], dict[int, list[float]]]] = {}
    for s in collect_samples(turn_scores, exclude=exclude):
        t1 = s.turns.get(1)
        if t1 is None or t1.value is None:
            continue
        line = out.setdefault(s.dim, {}).setdefault((s.direction, s.lang), {1: [], 2: [], 3: []})
        for t, ts in s.turns.items():
            got = pair_values(t1, ts)
            if not isinstance(got, str):
                line[t].append(perceptual_change(s.dim, *got))
    return out


def mean_with_ci(vals: Sequence[float]) -> tuple[float, tuple[float, float] | None]:
    """The mean of ``vals`` and its 95% t-interval (``None`` under 2 values)."""
    from scipy.stats import t as student_t

    n = len(vals)
    mean = sum(vals) / n
    if n < 2:
        return mean, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = float(student_t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return mean, (mean - half, mean + half)


def change_rows(
    turn_scores: Sequence[TurnScore], exclude: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The mean change from turn 1 per (dim, direction, lang) and turn, JSON-ready: ``dim,
    direction, lang, turn, mean, ci`` (the 95% t-interval of the mean, ``None`` under 2 samples;
    3 decimals, in the dim's perceptual unit) and ``n`` (samples whose turn 1 and turn t are
    scored). What the trajectory plot draws and the comparison's ``tables.change`` holds."""
    data = trajectories(turn_scores, exclude)
    rows = []
    for dim in (d for d in DIMS if d in data):
        for direction, lang in sorted(data[dim], key=lambda k: (DIRECTIONS.index(k[0]), k[1])):
            for t, vals in data[dim][(direction, lang)].items():
                if not vals:
                    continue
                mean, ci = mean_with_ci(vals)
                rows.append(
                    {
                        "dim": dim,
                        "direction": direction,
                        "lang": lang,
                        "turn": t,
                        "mean": round(mean, 3),
                        "ci": None if ci is None else [round(ci[0], 3), round(ci[1], 3)],
                        "n": len(vals),
                    }
                )
    return rows


def plot_trajectories(
    turn_scores: Sequence[TurnScore],
    path: Path,
    *,
    title: str = "",
    exclude: Collection[str] = (),
) -> Path:
    """Plot mean change per turn relative to turn 1, one subplot per dim, and write a PNG.

    For each sample whose turn 1 has a score, turn t is placed at
    ``perceptual_change(dim, turn1, turn_t)`` (semitones, dB, percent, rating points), so turn 1 is
    0; one line per (direction, lang) shows the mean over samples with a 95% t-interval of the mean
    (no bar when fewer than 2 samples): the rows of :func:`change_rows`. Samples whose turn 1
    failed are left out.

    The PNG is written to a temporary name and renamed, so a crash never leaves half a file.

    Raises:
        NothingToPlot: no sample has a turn-1 score to normalise by.
        ModuleNotFoundError: matplotlib (the ``[plot]`` extra) is not installed.
    """
    from matplotlib.figure import Figure

    rows = change_rows(turn_scores, exclude)
    if not rows:
        raise NothingToPlot(
            "no sample has a turn-1 score (each failed, or was left out by the relevance gate)"
        )
    dims = [d for d in DIMS if any(r["dim"] == d for r in rows)]
    fig = Figure(figsize=(4.2 * len(dims), 3.6), layout="constrained")
    axes = fig.subplots(1, len(dims), squeeze=False)[0]
    for ax, dim in zip(axes, dims, strict=True):
        mine = [r for r in rows if r["dim"] == dim]
        keys = list(dict.fromkeys((r["direction"], r["lang"]) for r in mine))
        for i, (direction, lang) in enumerate(keys):
            line = [r for r in mine if (r["direction"], r["lang"]) == (direction, lang)]
            ax.errorbar(
                [r["turn"] + (i - (len(keys) - 1) / 2) * 0.04 for r in line],  # dodge the bars
                [r["mean"] for r in line],
                yerr=[r["mean"] - r["ci"][0] if r["ci"] else 0.0 for r in line],
                marker="o",
                capsize=3,
                label=f"{direction} {lang}",
                linestyle="-" if direction == "intensify" else "--",
            )
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks([1, 2, 3])
        ax.set_xlabel("turn")
        ax.set_ylabel(f"change vs turn 1 ({dimension(dim).words['change']})")
        ax.set_title(dim)
        ax.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    from stylebench.atomic import replace_with

    return replace_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100))
