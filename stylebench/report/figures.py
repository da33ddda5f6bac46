"""Figures drawn from the rows of a comparison's or a report's tables (matplotlib, the [plot] extra).

Each figure is drawn from rows that are already in ``compare.json`` (Table 4, the change from
turn 1, the quality change, the persistence cells): it reads numbers, never computes a score, so
a figure and its table show the same numbers.

Made for print and for many models:

- a model is told apart by its marker and line style as well as its colour (the colours are the
  Okabe-Ito set, but the figures stay readable in greyscale); the calibration rows keep the same
  look in every figure (``reference`` black, solid, squares; ``neutral`` grey, dashed, open
  circles; ``shuffled`` grey, dotted, crosses);
- models are rows (VSP, quality) or a legend below the panels (change per turn), and the size
  grows with their number, so 1, 3 and 10 models stay readable;
- every figure says n: each row's ``n ok / n`` at its right end, each panel's range of n in its
  title.

Files are deterministic: SVG with text kept as text, no date, and a fixed salt for matplotlib's
element ids; drawing the same rows twice gives the same bytes. Model names are drawn as plain
text (no mathtext), and matplotlib escapes them in the SVG.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stylebench.records import DIMS, DIRECTIONS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: the Okabe-Ito colours (colour-blind safe) without black (the reference row's) and yellow (too
#: pale on white); markers and line styles change with them, which is what a greyscale print keeps
COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "p", "*", "d")
LINESTYLES = ("-", "--", "-.", ":")
#: the narrowest figure, inches: room for a title and a legend under a single panel
MIN_WIDTH = 7.5


@dataclass(frozen=True)
class Look:
    """How one model is drawn: colour, marker, line style, and whether its marker is filled."""

    colour: str
    marker: str
    linestyle: str
    filled: bool = True


#: the calibration rows' looks, the same in every figure
CALIBRATION_LOOKS = {
    "reference": Look("#000000", "s", "-"),
    "neutral": Look("#777777", "o", "--", filled=False),
    "shuffled": Look("#999999", "x", ":"),
    "forgetful": Look("#555555", "v", "-."),
}


@dataclass(frozen=True)
class Model:
    """A model as the figures show it: its label, which calibration row it is (``None``: not
    one), and whether it passed the relevance gate (``None``: unknown)."""

    label: str
    calibration: str | None = None
    eligible: bool | None = None


@dataclass(frozen=True)
class Drawn:
    """One drawn figure: its file name, what it shows (alt text and caption), its bytes."""

    name: str
    caption: str
    data: bytes

    @property
    def mime(self) -> str:
        return "image/svg+xml" if self.name.endswith(".svg") else "image/png"


def looks(models: Sequence[Model]) -> dict[str, Look]:
    """Each model's look: the calibration rows their own, the others in turn from the cycles
    (marker, line style and colour all change from one model to the next)."""
    out: dict[str, Look] = {}
    i = 0
    for m in models:
        if m.calibration in CALIBRATION_LOOKS:
            out[m.label] = CALIBRATION_LOOKS[m.calibration]
            continue
        out[m.label] = Look(
            COLOURS[i % len(COLOURS)], MARKERS[i % len(MARKERS)], LINESTYLES[i % len(LINESTYLES)]
        )
        i += 1
    return out


def render(fig: Figure, fmt: str = "svg") -> bytes:
    """The figure's file bytes, the same on every call (``svg`` or ``png``)."""
    import matplotlib

    buf = io.BytesIO()
    meta: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
    with matplotlib.rc_context({"svg.hashsalt": "stylebench", "svg.fonttype": "none"}):
        # tight: a legend wider than the panels (long model names) is kept, not cut off
        fig.savefig(buf, format=fmt, metadata=meta, dpi=100, bbox_inches="tight", pad_inches=0.1)
    return buf.getvalue()


def _title(fig: Figure, text: str) -> None:
    """The figure's title, each line wrapped to the figure's width (a narrow figure of one dim
    keeps its whole title)."""
    import textwrap

    chars = int(fig.get_figwidth() * 13)
    fig.suptitle(
        "\n".join(textwrap.fill(line, chars) for line in text.split("\n")), fontsize="medium"
    )


def _n_range(ns: Iterable[int]) -> str:
    vals = sorted(set(ns))
    if not vals:
        return "n 0"
    return f"n {vals[0]}" if len(vals) == 1 else f"n {vals[0]}–{vals[-1]}"


def _legend_below(fig: Figure, axes: Iterable[Axes]) -> None:
    """One legend under the panels with each labelled line once (a model missing from the first
    panel still gets its entry); the labels are plain text, never read as mathtext."""
    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes:
        for h, lb in zip(*ax.get_legend_handles_labels(), strict=True):
            if lb not in labels:
                handles.append(h)
                labels.append(lb)
    if not handles:
        return
    leg = fig.legend(
        handles, labels, loc="outside lower center", ncols=min(4, len(handles)), frameon=False
    )
    for t in leg.get_texts():
        t.set_parse_math(False)


def _rows_order(models: Sequence[Model]) -> tuple[list[Model], list[Model]]:
    """The models shown as rows, top to bottom: those not failed by the gate, then (apart)
    those that failed it."""
    return [m for m in models if m.eligible is not False], [
        m for m in models if m.eligible is False
    ]


def _row_positions(models: Sequence[Model]) -> tuple[dict[str, float], float | None]:
    """y of each model's row (top row highest) and the y of the line between the eligible and
    the not-eligible models (None when one group is empty)."""
    kept, failed = _rows_order(models)
    ys: dict[str, float] = {}
    y = float(len(kept) + len(failed)) + (0.6 if kept and failed else 0.0)
    for m in kept:
        ys[m.label] = y
        y -= 1.0
    gap = None
    if kept and failed:
        gap = y + 0.2
        y -= 0.6
    for m in failed:
        ys[m.label] = y
        y -= 1.0
    return ys, gap


def _model_rows(
    ax: Axes, models: Sequence[Model], ys: Mapping[str, float], *, labelled: bool = True
) -> None:
    """The rows' ticks, with the model names where ``labelled`` (the first panel of a row of
    panels), the not-eligible ones greyed."""
    ax.set_yticks([ys[m.label] for m in models])
    if labelled:
        names = [m.label + (" (not eligible)" if m.eligible is False else "") for m in models]
        ax.set_yticklabels(names, parse_math=False)
        for tick, m in zip(ax.get_yticklabels(), models, strict=True):
            if m.eligible is False:
                tick.set_color("#666666")
                tick.set_style("italic")
    else:
        ax.set_yticklabels([])
    lo, hi = min(ys.values()), max(ys.values())
    ax.set_ylim(lo - 0.7, hi + 0.7)


def _row_point(
    ax: Axes,
    x: float,
    y: float,
    ci: Sequence[float] | None,
    look: Look,
    *,
    eligible: bool | None,
    marker: str | None = None,
) -> None:
    """One row's value as a marker with its CI as a bar (a model that failed the gate greyed,
    its marker open)."""
    faded = eligible is False
    colour = "#888888" if faded else look.colour
    if ci is not None:
        ax.hlines(y, ci[0], ci[1], colors=colour, linewidth=1.4)
        ax.plot(ci, (y, y), marker="|", markersize=6, color=colour, linestyle="none")
    ax.plot(
        [x],
        [y],
        marker=marker or look.marker,
        markersize=6,
        color=colour,
        markerfacecolor=colour if look.filled and not faded else "white",
        markeredgecolor=colour,
        linestyle="none",
    )


def vsp_figure(
    rows: Sequence[Mapping[str, Any]], models: Sequence[Model], *, rate: str = "vsp"
) -> Figure:
    """VSP (``rate="vsp"``) or the direction-only rate (``"vsp_direction"``) per model, one panel
    per (turn pair, dim) of Table 4 (``rows``: ``model, dim, pair, source, <rate>,
    <rate>_ci, n_ok, n``).

    Each model is a row with its 95% CI and its ``n ok / n`` at the right; models that failed the
    relevance gate sit apart at the bottom, greyed. The calibration rows are rows too, and their
    values are drawn as vertical lines across every panel, so a model's place between
    ``neutral`` and ``reference`` reads at a glance.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.transforms import blended_transform_factory

    by = {(r["model"], r["dim"], r["pair"]): r for r in rows}
    shown = [m for m in models if any(k[0] == m.label for k in by)]
    dims = [d for d in DIMS if any(k[1] == d for k in by)]
    pairs = sorted({k[2] for k in by})
    ys, gap = _row_positions(shown)
    style = looks(shown)
    height = 1.1 + 0.3 * (len(ys) + (0.6 if gap is not None else 0.0))
    width = max(MIN_WIDTH, 1.6 + 3.0 * len(dims))
    fig = Figure(figsize=(width, 1.2 + len(pairs) * height), layout="constrained")
    axes = fig.subplots(len(pairs), len(dims), squeeze=False)
    order = [m for group in _rows_order(shown) for m in group]
    for i, pair in enumerate(pairs):
        for j, dim in enumerate(dims):
            ax = axes[i][j]
            here = [by[(m.label, dim, pair)] for m in order if (m.label, dim, pair) in by]
            source = next((r.get("source") for r in here), "")
            ax.set_title(
                f"{dim}{' (prosodic)' if source == 'prosodic' else ''}, turns {pair} "
                f"({_n_range(r['n_ok'] for r in here)})",
                fontsize="medium",
            )
            for m in shown:  # the calibration rows' values as lines
                r = by.get((m.label, dim, pair))
                if m.calibration in CALIBRATION_LOOKS and r and r.get(rate) is not None:
                    look = CALIBRATION_LOOKS[m.calibration]
                    ax.axvline(
                        r[rate], color=look.colour, linestyle=look.linestyle, linewidth=1, zorder=0
                    )
            side = blended_transform_factory(ax.transAxes, ax.transData)
            for m in order:
                r = by.get((m.label, dim, pair))
                if r is None:
                    continue
                y = ys[m.label]
                if r.get(rate) is not None:
                    _row_point(
                        ax, r[rate], y, r.get(f"{rate}_ci"), style[m.label], eligible=m.eligible
                    )
                else:
                    ax.text(50, y, "no scored sample", ha="center", va="center", fontsize="small")
                ax.text(
                    1.02, y, f"{r['n_ok']}/{r['n']}", transform=side, va="center", fontsize="small"
                )
            if gap is not None:
                ax.axhline(gap, color="#bbbbbb", linewidth=0.8)
            ax.set_xlim(-3, 103)
            ax.grid(axis="x", color="#eeeeee", linewidth=0.8)
            ax.set_axisbelow(True)
            _model_rows(ax, order, ys, labelled=j == 0)
            if i == len(pairs) - 1:
                ax.set_xlabel(RATE_AXIS[rate])
    kinds = dict.fromkeys(m.calibration for m in shown if m.calibration in CALIBRATION_LOOKS)
    handles = [
        Line2D([], [], color=look.colour, linestyle=look.linestyle, label=f"{kind} row")
        for kind in kinds
        if kind is not None
        for look in (CALIBRATION_LOOKS[kind],)
    ]
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)
    apart = "; models that failed the relevance gate below the line" if gap is not None else ""
    _title(fig, f"{RATE_TITLE[rate]}\n(n ok / n at the right of each row{apart})")
    return fig


#: each rate's axis label and figure title
RATE_AXIS = {"vsp": "VSP % [95% CI]", "vsp_direction": "direction-only % [95% CI]"}
RATE_TITLE = {
    "vsp": "VSP: share of scored samples that moved as asked by at least the threshold",
    "vsp_direction": "Direction-only rate: share of scored samples whose change has the asked "
    "sign, any size\n(a model that follows no instruction, with changes of either sign: about 50)",
}


def change_figure(
    dim: str, rows: Sequence[Mapping[str, Any]], models: Sequence[Model], unit: str
) -> Figure:
    """Mean change from turn 1 per turn of one dim, one panel per (direction, lang), the models
    side by side (``rows``: ``model, dim, direction, lang, turn, mean, ci, n``; ``ci`` the 95%
    interval of the mean, ``None`` under 2 samples). Turn 1 is 0 by construction."""
    from matplotlib.figure import Figure

    mine = [r for r in rows if r["dim"] == dim]
    keys = sorted(
        {(r["direction"], r["lang"]) for r in mine}, key=lambda k: (DIRECTIONS.index(k[0]), k[1])
    )
    directions = [d for d in DIRECTIONS if any(k[0] == d for k in keys)]
    langs = sorted({k[1] for k in keys})
    shown = [m for m in models if any(r["model"] == m.label for r in mine)]
    style = looks(shown)
    legend_rows = math.ceil(len(shown) / 4)
    fig = Figure(
        figsize=(
            max(MIN_WIDTH, 1.0 + 3.8 * len(directions)),
            0.8 + 2.9 * len(langs) + 0.25 * legend_rows,
        ),
        layout="constrained",
    )
    axes = fig.subplots(len(langs), len(directions), squeeze=False, sharex=True)
    width = min(0.5, 0.06 * len(shown))
    for i, lang in enumerate(langs):
        for j, direction in enumerate(directions):
            ax = axes[i][j]
            here = [r for r in mine if (r["direction"], r["lang"]) == (direction, lang)]
            for k, m in enumerate(shown):
                pts = sorted(
                    (r for r in here if r["model"] == m.label and r["mean"] is not None),
                    key=lambda r: r["turn"],
                )
                if not pts:
                    continue
                dx = (k - (len(shown) - 1) / 2) * (width / max(1, len(shown) - 1))
                look = style[m.label]
                ax.errorbar(
                    [r["turn"] + dx for r in pts],
                    [r["mean"] for r in pts],
                    yerr=[  # rounded apart, a bound may sit a hair past the mean
                        [max(0.0, r["mean"] - r["ci"][0]) if r["ci"] else 0.0 for r in pts],
                        [max(0.0, r["ci"][1] - r["mean"]) if r["ci"] else 0.0 for r in pts],
                    ],
                    color=look.colour,
                    marker=look.marker,
                    linestyle=look.linestyle,
                    markerfacecolor=look.colour if look.filled else "white",
                    markersize=5,
                    capsize=2,
                    linewidth=1.2,
                    label=m.label + (" (not eligible)" if m.eligible is False else ""),
                )
            ax.axhline(0.0, color="#999999", linewidth=0.8, zorder=0)
            ax.set_xticks([1, 2, 3])
            ax.set_title(
                f"{direction}, {lang} ({_n_range(r['n'] for r in here)} per point)",
                fontsize="medium",
            )
            if i == len(langs) - 1:
                ax.set_xlabel("turn")
            if j == 0:
                ax.set_ylabel(f"change from turn 1 ({unit})")
    _legend_below(fig, axes.flat)
    _title(
        fig,
        f"{dim}: mean change from turn 1 per turn, models side by side [95% CI of the mean]",
    )
    return fig


def quality_figure(changes: Sequence[Mapping[str, Any]], models: Sequence[Model]) -> Figure:
    """The change of speech quality (DNSMOS P.835) from turn 1, per model, one panel per score
    (SIG, BAK, OVRL) (``changes``: ``model, pair, d_<score>, d_<score>_ci, n``), one marker per
    pair of turns."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.transforms import blended_transform_factory

    shown = [m for m in models if any(r["model"] == m.label for r in changes)]
    pairs = sorted({r["pair"] for r in changes})
    pair_marker = dict(zip(pairs, ("o", "^", "s", "D"), strict=False))
    ys, gap = _row_positions(shown)
    order = [m for group in _rows_order(shown) for m in group]
    style = looks(shown)
    fig = Figure(figsize=(11.0, 1.6 + 0.32 * len(ys)), layout="constrained")
    axes = fig.subplots(1, 3, squeeze=False)[0]
    for j, (ax, score) in enumerate(zip(axes, ("sig", "bak", "ovrl"), strict=True)):
        side = blended_transform_factory(ax.transAxes, ax.transData)
        for m in order:
            mine = [r for r in changes if r["model"] == m.label]
            for k, r in enumerate(sorted(mine, key=lambda r: r["pair"])):
                y = ys[m.label] - (k - (len(mine) - 1) / 2) * 0.3  # the first pair on top
                if r.get(f"d_{score}") is not None:
                    _row_point(
                        ax,
                        r[f"d_{score}"],
                        y,
                        r.get(f"d_{score}_ci"),
                        style[m.label],
                        eligible=m.eligible,
                        marker=pair_marker[r["pair"]],
                    )
            if score == "ovrl" and mine:
                ax.text(
                    1.02,
                    ys[m.label],
                    "n " + "/".join(str(r["n"]) for r in sorted(mine, key=lambda r: r["pair"])),
                    transform=side,
                    va="center",
                    fontsize="small",
                )
        ax.axvline(0.0, color="#999999", linewidth=0.8, zorder=0)
        if gap is not None:
            ax.axhline(gap, color="#bbbbbb", linewidth=0.8)
        ax.set_title(f"Δ {score.upper()}", fontsize="medium")
        ax.set_xlabel("change from turn 1 [95% CI]")
        _model_rows(ax, order, ys, labelled=j == 0)
    handles = [
        Line2D([], [], color="black", marker=pair_marker[p], linestyle="none", label=f"turns {p}")
        for p in pairs
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)
    _title(
        fig,
        "Speech quality (DNSMOS P.835, 1-5 scale): change from turn 1 per model, paired per "
        "sample\n(n paired samples per pair of turns at the right)",
    )
    return fig


def decay_figure(
    cells: Mapping[str, Sequence[Mapping[str, Any]]], turns: Sequence[int], models: Sequence[Model]
) -> Figure:
    """Persistence per turn, one panel per dim, one curve per model: the mean over the dim's
    (direction, lang) cells of each turn (``cells``: per model label, persistence cells
    ``dim, turn, persistence, n_ok``); each panel's title gives the range of n ok per point."""
    from matplotlib.figure import Figure

    dims = [d for d in DIMS if any(c["dim"] == d for cs in cells.values() for c in cs)]
    shown = [m for m in models if m.label in cells]
    style = looks(shown)
    legend_rows = math.ceil(len(shown) / 4)
    fig = Figure(
        figsize=(max(MIN_WIDTH, 1.0 + 4.0 * len(dims)), 3.8 + 0.25 * legend_rows),
        layout="constrained",
    )
    axes = fig.subplots(1, max(1, len(dims)), squeeze=False)[0]
    for ax, dim in zip(axes, dims, strict=False):
        ns = []
        for m in shown:
            xs, ys = [], []
            for k in turns:
                here = [
                    c
                    for c in cells[m.label]
                    if c["dim"] == dim and c["turn"] == k and c["persistence"] is not None
                ]
                if here:
                    xs.append(k)
                    ys.append(sum(c["persistence"] for c in here) / len(here))
                    ns.append(sum(c["n_ok"] for c in here))
            look = style[m.label]
            ax.plot(
                xs,
                ys,
                color=look.colour,
                marker=look.marker,
                linestyle=look.linestyle,
                markerfacecolor=look.colour if look.filled else "white",
                label=m.label,
            )
        ax.set_ylim(-5, 105)
        ax.set_xticks(list(turns))
        ax.set_xlabel("turn")
        ax.set_ylabel("persistence (%)")
        ax.set_title(f"{dim} ({_n_range(ns)} per point)", fontsize="medium")
    _legend_below(fig, axes)
    _title(fig, "Persistence per turn (mean over the dim's cells)")
    return fig
