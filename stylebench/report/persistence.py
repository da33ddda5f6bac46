"""A persistence run's report files: report.json (the source), report.md, report.csv and the
decay-curve plot ``decay.png``, each written atomically (:mod:`stylebench.atomic`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.atomic import replace_with, write_text
from stylebench.records import DIMS, DIRECTIONS

PLOT_NAME = "decay.png"


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def render_csv(report: dict[str, Any]) -> str:
    """One row per (dim, direction, lang, turn) cell; errors as ``reason=count; ...``."""
    buf = io.StringIO()
    cols = ["model", "dim", "direction", "lang", "turn", "persistence", "ci_low", "ci_high"]
    cols += ["mean_diff", "unit", "n", "n_ok", "n_kept", "half_reversion_turn", "errors"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    half = {(h["dim"], h["direction"], h["lang"]): h["turn"] for h in report["half_reversion"]}
    for c in report["cells"]:
        ci = c["persistence_ci"] or [None, None]
        errors = "; ".join(f"{k}={v}" for k, v in c["errors"].items())
        row = [report["model"], c["dim"], c["direction"], c["lang"], c["turn"], c["persistence"]]
        row += [ci[0], ci[1], c["mean_diff"], c["unit"], c["n"], c["n_ok"], c["n_kept"]]
        row += [half.get((c["dim"], c["direction"], c["lang"])), errors]
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0f}%"


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_md(report: dict[str, Any]) -> str:
    """The persistence table per (dim, direction, lang): one column per turn."""
    turns = report["turns"]
    lines = [
        f"# Persistence report: {_md_cell(report['model'])}",
        "",
        f"Set `{report['set_version']}`, {report['n_samples']} samples, {len(turns)} turns; "
        "each instructed turn compared with the same turn of its control dialogue "
        "(docs/persistence.md).",
        "",
        f"Mean persistence over turns 2..{turns[-1]}: {_pct(report['mean_after_turn1'])}.",
        "",
        "| dim | direction | lang | "
        + " | ".join(f"turn {k}" for k in turns)
        + " | half-reversion turn |",
        "|---|---|---|" + "---|" * len(turns) + "---|",
    ]
    cells = {(c["dim"], c["direction"], c["lang"], c["turn"]): c for c in report["cells"]}
    half = {(h["dim"], h["direction"], h["lang"]): h for h in report["half_reversion"]}
    keys = {(c["dim"], c["direction"], c["lang"]) for c in report["cells"]}
    for key in sorted(keys, key=lambda k: (DIMS.index(k[0]), DIRECTIONS.index(k[1]), k[2])):
        row = []
        for k in turns:
            c = cells.get((*key, k))
            if c is None:
                row.append("")
                continue
            ci = c["persistence_ci"]
            ci_s = f" [{ci[0]:.0f}, {ci[1]:.0f}]" if ci else ""
            diff = "" if c["mean_diff"] is None else f", {c['mean_diff']:+.2f} {c['unit']}"
            row.append(f"{_pct(c['persistence'])}{ci_s} ({c['n_ok']}/{c['n']}{diff})")
        lines.append(
            f"| {' | '.join(key)} | " + " | ".join(row) + f" | {_half(half.get(key), turns[-1])} |"
        )
    lines += [
        "",
        "Cells: persistence [bootstrap CI] (n_ok/n, mean signed difference instructed - control).",
    ]
    unscored = {}
    for c in report["cells"]:
        for reason, n in c["errors"].items():
            unscored[reason] = unscored.get(reason, 0) + n
    if unscored:
        lines += ["", "## Unscored turns (left out of the shares, never scored 0)", ""]
        lines += [f"- {_md_cell(r)}: {n}" for r, n in sorted(unscored.items())]
    if report.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {_md_cell(n)}" for n in report["notes"]]
    if report.get("plot"):
        lines += ["", f"_{_md_cell(report['plot'])}_"]
    else:
        lines += ["", f"![decay curve]({PLOT_NAME})"]
    return "\n".join(lines) + "\n"


def _half(entry: dict[str, Any] | None, last_turn: int) -> str:
    """The half-reversion column: the turn; ``>K`` when every turn scored (to turn ``K``; a
    report from before ``scored_to``: the last turn) stays above 50%; ``n/a`` when no turn
    was scored."""
    if entry is None:
        return "n/a"
    if entry["turn"] is not None:
        return str(entry["turn"])
    return f">{entry.get('scored_to', last_turn)}"


def render(report: dict[str, Any], fmt: str) -> str:
    """The report in ``fmt`` (``md``, ``json`` or ``csv``)."""
    return {"md": render_md, "json": render_json, "csv": render_csv}[fmt](report)


def plot_decay(report: dict[str, Any], path: Path) -> Path:
    """Persistence per turn, one panel per dim, one line per (direction, lang); atomic PNG.

    Raises:
        ModuleNotFoundError: matplotlib (the ``[plot]`` extra) is not installed.
    """
    from matplotlib.figure import Figure

    dims = [d for d in DIMS if any(c["dim"] == d for c in report["cells"])]
    fig = Figure(figsize=(4.2 * max(1, len(dims)), 3.6), layout="constrained")
    axes = fig.subplots(1, max(1, len(dims)), squeeze=False)[0]
    for ax, dim in zip(axes, dims, strict=False):
        keys = sorted(
            {(c["direction"], c["lang"]) for c in report["cells"] if c["dim"] == dim},
            key=lambda k: (DIRECTIONS.index(k[0]), k[1]),
        )
        for direction, lang in keys:
            pts = [
                (c["turn"], c["persistence"])
                for c in report["cells"]
                if (c["dim"], c["direction"], c["lang"]) == (dim, direction, lang)
                and c["persistence"] is not None
            ]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(
                    xs,
                    ys,
                    marker="o",
                    label=f"{direction} {lang}",
                    linestyle="-" if direction == "intensify" else "--",
                )
        ax.set_ylim(-5, 105)
        ax.set_xticks(report["turns"])
        ax.set_xlabel("turn")
        ax.set_ylabel("persistence (%)")
        ax.set_title(dim)
        if ax.get_lines():
            ax.legend(fontsize="small")
        else:  # a dimension with no scored turn: an empty panel, said so, no empty legend
            ax.text(0.5, 0.5, "nothing scored", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(f"{report['model']}: persistence vs control")
    return replace_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100))


def write_persistence_reports(root: Path, report: dict[str, Any]) -> dict[str, Any]:
    """Draw the decay plot (or say why not), then write report.json/.md/.csv into ``root``."""
    root = Path(root)
    (root / PLOT_NAME).unlink(missing_ok=True)
    if any(c["persistence"] is not None for c in report["cells"]):
        try:
            plot_decay(report, root / PLOT_NAME)
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("matplotlib"):
                raise
            report["plot"] = "no plot: matplotlib is not installed (the [plot] extra)"
    else:
        report["plot"] = "no plot: no scored cell"
    for name, text in (
        ("report.json", render_json(report)),
        ("report.md", render_md(report)),
        ("report.csv", render_csv(report)),
    ):
        write_text(root / name, text)
    return report


def report_dict(
    meta: dict[str, Any],
    cells: Sequence[dict[str, Any]],
    half: Sequence[dict[str, Any]],
    turns: Sequence[int],
    summary: dict[str, Any],
    notes: Sequence[str],
) -> dict[str, Any]:
    """The report's JSON form: ``meta`` (model, set_version, n_samples, ...) then the scores."""
    return {
        "protocol": "persistence",
        **meta,
        "turns": list(turns),
        **summary,
        "cells": list(cells),
        "half_reversion": list(half),
        "notes": list(notes),
    }
