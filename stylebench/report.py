"""Reports from scored cells: JSON (the source of truth), Markdown, CSV and a trajectory plot.

``build_report`` makes one JSON-ready dict; ``to_markdown`` and ``to_csv`` render only that dict, so
a report loaded back from JSON renders the same way. Text that comes from outside (model names,
notes, error reasons, extractor names) is escaped in Markdown so it cannot break a table.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stylebench.scoring import (
    DIMS,
    DIRECTIONS,
    Cell,
    Thresholds,
    TurnScore,
    cell_sort_key,
    collect_samples,
    perceptual_change,
)

# Units of a turn's score and of the change between turns, per dim.
UNITS = {
    "pitch": {"score": "Hz", "change": "semitones", "svd": "% of Hz"},
    "volume": {"score": "RMS amplitude", "change": "dB", "svd": "% of RMS"},
    "speed": {"score": "syllables/min", "change": "percent", "svd": "% of SPM"},
    # emotion cells hold the prosodic index (JND units); probe cells a probability; human a
    # rating (see the report's emotion_scores block, stylebench.emotion)
    "emotion": {
        "score": "prosodic index (JND units) or probability",
        "change": "points",
        "svd": "points (absolute)",
    },
}
_SHORT = {"pitch": "st", "volume": "dB", "speed": "%", "emotion": "pt"}
CELL_KEYS = (
    "dim", "direction", "lang", "pair", "group", "vsp", "vsp_ci", "vsp_all", "svd", "svd_ci",
    "svd_signed", "change_mean", "n", "n_ok", "n_valid", "n_flagged", "errors",
)  # fmt: skip
_RESERVED = {"model", "run_id", "dims", "langs", "cells", "per_turn", "thresholds", "extractors",
             "units", "n_samples", "n_turns_total", "n_turns_ok", "notes"}  # fmt: skip


@dataclass(frozen=True)
class ReportMeta:
    """Run-level facts printed with every report (which model, which extractors, how many)."""

    model: str
    run_id: str
    dims: tuple[str, ...]
    langs: tuple[str, ...]
    thresholds: Thresholds
    extractors: Mapping[str, str]
    n_samples: int
    n_turns_total: int
    n_turns_ok: int
    notes: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(float(x), nd)


def _sig(x: float | None, digits: int = 6) -> float | None:
    """Round to ``digits`` significant figures (raw scores span Hz to small RMS amplitudes)."""
    if x is None or x == 0:
        return x
    return round(float(x), digits - 1 - int(math.floor(math.log10(abs(x)))))


def _ci(ci: tuple[float, float] | None, nd: int) -> list[float] | None:
    return None if ci is None else [round(float(ci[0]), nd), round(float(ci[1]), nd)]


def _cell_dict(c: Cell) -> dict[str, Any]:
    return {
        "dim": c.dim, "direction": c.direction, "lang": c.lang, "pair": c.pair, "group": c.group,
        "vsp": _round(c.vsp, 2), "vsp_ci": _ci(c.vsp_ci, 2), "vsp_all": _round(c.vsp_all, 2),
        "svd": _round(c.svd, 3), "svd_ci": _ci(c.svd_ci, 3), "svd_signed": _round(c.svd_signed, 3),
        "change_mean": _round(c.change_mean, 3), "n": c.n, "n_ok": c.n_ok, "n_valid": c.n_valid,
        "n_flagged": c.n_flagged, "errors": dict(c.errors),
    }  # fmt: skip


def _per_turn(turn_scores: Sequence[TurnScore], exclude: Collection[str]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, str, str], dict[int, list[float | None]]] = {}
    for s in collect_samples(turn_scores, exclude=exclude):
        per = groups.setdefault((s.dim, s.direction, s.lang, s.group), {1: [], 2: [], 3: []})
        for t in (1, 2, 3):
            ts = s.turns.get(t)
            per[t].append(None if ts is None else ts.value)
    rows = []
    for dim, direction, lang, group in sorted(
        groups, key=lambda k: cell_sort_key(*k[:3], "", k[3])
    ):
        for t, vals in groups[(dim, direction, lang, group)].items():
            ok = [v for v in vals if v is not None]
            rows.append({
                "dim": dim, "direction": direction, "lang": lang, "group": group, "turn": t,
                "mean": _sig(sum(ok) / len(ok)) if ok else None, "n_ok": len(ok), "n": len(vals),
            })  # fmt: skip
    return rows


def build_report(
    meta: ReportMeta,
    cells: Sequence[Cell],
    turn_scores: Sequence[TurnScore],
    *,
    exclude: Collection[str] = (),
) -> dict[str, Any]:
    """Assemble the JSON-ready report.

    ``per_turn`` holds, per (dim, direction, lang, group, turn), the mean score over ok turns on the
    linear scale, with ``n_ok`` and ``n`` (samples in the group). Pass the same ``exclude`` as to
    ``score_cells`` so both count the same samples. Percents are rounded to 2 decimals, SVD and
    changes to 3, raw means to 6 significant figures; ``None`` stays ``None``.

    Raises:
        ValueError: a key of ``meta.extra`` would overwrite a standard report key.
    """
    clash = sorted(_RESERVED & set(meta.extra))
    if clash:
        raise ValueError(f"ReportMeta.extra must not redefine report keys {clash}; rename them")
    ordered = sorted(
        cells, key=lambda c: cell_sort_key(c.dim, c.direction, c.lang, c.pair, c.group)
    )
    report: dict[str, Any] = {
        "model": meta.model,
        "run_id": meta.run_id,
        "dims": list(meta.dims),
        "langs": list(meta.langs),
        "cells": [_cell_dict(c) for c in ordered],
        "per_turn": _per_turn(turn_scores, exclude),
        "thresholds": asdict(meta.thresholds),
        "extractors": dict(meta.extractors),
        "units": {d: UNITS[d] for d in DIMS},
        "n_samples": meta.n_samples,
        "n_turns_total": meta.n_turns_total,
        "n_turns_ok": meta.n_turns_ok,
        "notes": list(meta.notes),
    }
    report.update(meta.extra)
    return report


def to_json(report: dict) -> str:
    """Pretty JSON (UTF-8 text kept as is); NaN or infinity raise ``ValueError``."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def md_escape(text: Any) -> str:
    """Make outside text safe inside a Markdown table cell or heading.

    Line breaks become spaces; backslash, ``|``, ``<`` and ``>`` are escaped so text can neither end
    a table cell, start a new row, nor inject HTML.
    """
    s = " ".join(str(text).splitlines())
    s = s.replace("\\", "\\\\").replace("|", "\\|")
    return s.replace("<", "&lt;").replace(">", "&gt;")


def _fmt(x: float | None, ci: Sequence[float] | None, nd: int = 1) -> str:
    if x is None:
        return "–"
    return f"{x:.{nd}f}" + (f" [{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]" if ci is not None else "")


def _vsp_all(c: Mapping[str, Any]) -> str:
    """VSP over all samples (failed = not valid), shown only when some samples failed."""
    return "" if c["n_ok"] == c["n"] or c["vsp_all"] is None else f"; all {c['vsp_all']:.1f}"


def _signed(c: Mapping[str, Any]) -> str:
    if c["svd_signed"] is None:
        return "–"
    if c["dim"] in ("speed", "emotion"):  # the relative and perceptual changes coincide here
        return f"{c['change_mean']:+.2f} {_SHORT[c['dim']]}"
    return f"{c['svd_signed']:+.1f}% ({c['change_mean']:+.2f} {_SHORT[c['dim']]})"


def _dim_table(dim: str, cells: list[Mapping[str, Any]], mark: str = "") -> list[str]:
    grouped = any(c["group"] for c in cells)
    head = ["direction", "lang", "pair"] + (["group"] if grouped else [])
    head += ["VSP % [95% CI]", f"SVD {UNITS[dim]['svd']} [95% CI]", "signed change",
             "n_ok/n", "flagged"]  # fmt: skip
    lines = [f"## {md_escape(dim)}", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]  # fmt: skip
    errs = []
    for c in cells:
        key = [c["direction"], c["lang"], c["pair"]] + ([c["group"]] if grouped else [])
        row = [md_escape(k) for k in key] + [
            mark + _fmt(c["vsp"], c["vsp_ci"]) + _vsp_all(c), mark + _fmt(c["svd"], c["svd_ci"], 2), _signed(c),
            f"{c['n_ok']}/{c['n']}", str(c["n_flagged"]),
        ]  # fmt: skip
        lines.append("| " + " | ".join(row) + " |")
        if c["errors"]:
            what = ", ".join(f"{md_escape(r)} ({k})" for r, k in c["errors"].items())
            errs.append(f"- {' / '.join(md_escape(k) for k in key)}: {what}")
    if errs:
        lines += ["", "Errors (failed samples; counted as not valid in 'all'):", *errs]
    return lines + [""]


def to_markdown(report: dict) -> str:
    """Markdown: title, thresholds and extractors line, one table per dim, errors, notes."""
    th = report["thresholds"]
    lines = [
        f"# stylebench: {md_escape(report['model'])} (run {md_escape(report['run_id'])})",
        "",
        f"Thresholds: pitch {th['pitch_st']} st, volume {th['volume_db']} dB, "
        f"speed {th['speed_pct']}%, emotion {th.get('emotion_delta', 0.0)} pt. Extractors: "
        + ("; ".join(f"{md_escape(k)}: {md_escape(v)}" for k, v in report["extractors"].items())
           or "none recorded") + ".",
        "",
        f"Samples: {report['n_samples']}; turns ok: {report['n_turns_ok']}/"
        f"{report['n_turns_total']}. VSP = valid/ok samples; SVD over valid samples; "
        "signed change = mean over ok samples.",
        "",
    ]  # fmt: skip
    from stylebench.relevance import banner_markdown, relevance_markdown

    lines[2:2] = banner_markdown(report)  # under the title: the not-eligible banner, if any
    mark = "✗ " if report.get("eligible") is False else ""  # the gate: marked, never dropped
    dims = list(report.get("dims") or [])
    dims += sorted({c["dim"] for c in report["cells"]} - set(dims), key=str)
    for dim in dims:
        cells = [c for c in report["cells"] if c["dim"] == dim]
        if cells:
            lines += _dim_table(dim, cells, mark)
    if "judge" in report:  # relevance verdicts and the gate (stylebench.relevance)
        lines += relevance_markdown(report, md_escape)
    if report.get("human"):  # imported listening-test ratings (stylebench.ratings_import)
        from stylebench.ratings_report import human_markdown

        lines += human_markdown(report["human"])
    if report.get("emotion_scores"):  # which emotion scores are human, probe or prosodic
        from stylebench.emotion import emotion_markdown

        lines += emotion_markdown(report["emotion_scores"])
    if report.get("notes"):
        lines += ["## Notes", "", *(f"- {md_escape(n)}" for n in report["notes"]), ""]
    return "\n".join(lines)


def to_csv(report: dict) -> str:
    """One row per cell with a header; CIs split into low/high columns, errors as JSON."""
    cols = ["model", "run_id", "dim", "direction", "lang", "pair", "group", "n", "n_ok", "n_valid",
            "vsp", "vsp_ci_low", "vsp_ci_high", "vsp_all", "svd", "svd_ci_low", "svd_ci_high",
            "svd_signed", "change_mean", "n_flagged", "errors", "eligible"]  # fmt: skip
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for c in report["cells"]:
        row = {k: c.get(k) for k in cols if k in c}
        for name in ("vsp", "svd"):
            ci = c[f"{name}_ci"]
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = ci if ci is not None else (None, None)
        row.update(model=report["model"], run_id=report["run_id"],
                   errors=json.dumps(c["errors"], ensure_ascii=False, sort_keys=True),
                   eligible={True: "true", False: "false"}.get(report.get("eligible"), ""))  # fmt: skip
        w.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def _trajectories(
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
            if ts.value is not None:
                line[t].append(perceptual_change(s.dim, t1.value, ts.value))
    return out


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
    (no bar when fewer than 2 samples). Samples whose turn 1 failed are left out.

    Raises:
        ValueError: no sample has a turn-1 score to normalise by.
    """
    from matplotlib.figure import Figure
    from scipy.stats import t as student_t

    data = _trajectories(turn_scores, exclude)
    if not data:
        raise ValueError("plot_trajectories: no sample has a turn-1 score; nothing to plot")
    dims = [d for d in DIMS if d in data]
    fig = Figure(figsize=(4.2 * len(dims), 3.6), layout="constrained")
    axes = fig.subplots(1, len(dims), squeeze=False)[0]
    for ax, dim in zip(axes, dims, strict=True):
        keys = sorted(data[dim], key=lambda k: (DIRECTIONS.index(k[0]), k[1]))
        for i, (direction, lang) in enumerate(keys):
            xs, ys, errs = [], [], []
            for t, vals in data[dim][(direction, lang)].items():
                if not vals:
                    continue
                n = len(vals)
                mean = sum(vals) / n
                sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 else 0.0
                half = float(student_t.ppf(0.975, n - 1)) * sd / math.sqrt(n) if n > 1 else 0.0
                xs.append(t + (i - (len(keys) - 1) / 2) * 0.04)  # dodge overlapping bars
                ys.append(mean)
                errs.append(half)
            ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=3, label=f"{direction} {lang}",
                        linestyle="-" if direction == "intensify" else "--")  # fmt: skip
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks([1, 2, 3])
        ax.set_xlabel("turn")
        ax.set_ylabel(f"change vs turn 1 ({UNITS[dim]['change']})")
        ax.set_title(dim)
        ax.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=100)
    return path
