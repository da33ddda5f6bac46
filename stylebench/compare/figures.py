"""The comparison's figures (:mod:`stylebench.report.figures`), drawn from ``compare.json``'s own
numbers, written beside the comparison (``figures/``), linked from ``compare.md`` and shown
inline on ``compare.html``.

- ``vsp.svg`` and ``vsp_direction.svg``: Table 4's VSP and direction-only rate per model, dim
  and turn pair, the calibration rows as lines, models that failed the gate apart;
- ``change-<dim>.svg``: ``tables.change``, the mean change from turn 1 per turn, per direction
  and language, the models side by side;
- ``quality.svg``: the DNSMOS change from turn 1 per model (``quality.changes``), when measured.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from stylebench.compare.calibrate import CALIBRATION
from stylebench.report.figures import Drawn, Model

#: the folder under the comparison's output that holds the figure files
FOLDER = "figures"
NO_MATPLOTLIB = "no figures: matplotlib is not installed (the [plot] extra)"


def figure_models(result: Mapping[str, Any]) -> list[Model]:
    """The comparison's models as the figures show them, in leaderboard order (the eligible
    first, then those that failed the gate). A calibration row is drawn as one (its own look, its
    value as a line) when it is the comparison's only run of that model; several runs of one
    calibration model (labelled ``neutral@<run>``, ...) are told apart like any other models."""
    out = []
    for s in result["leaderboard"]:
        calibration = s["model"] if s["calibration"] and s["model"] in CALIBRATION else None
        out.append(Model(s["model"], calibration, s["eligible"]))
    return out


def comparison_figures(result: Mapping[str, Any]) -> list[Drawn]:
    """Every figure of the comparison ``result`` (:func:`~stylebench.compare.build.compare_runs`),
    as SVG, in the order the page shows them.

    Raises:
        ModuleNotFoundError: matplotlib (the ``[plot]`` extra) is not installed.
    """
    from stylebench.metrics.dims.base import dimension
    from stylebench.records import DIMS
    from stylebench.report.figures import (
        change_figure,
        quality_figure,
        render,
        vsp_figure,
    )

    models = figure_models(result)
    tables = result["tables"]
    n = result["n_shared"]
    out = [
        Drawn(
            "vsp.svg",
            f"VSP % per model, dim and turn pair (Table 4) with 95% CIs; {n} shared samples, "
            "n ok / n per row in the figure",
            render(vsp_figure(tables["dims"], models, rate="vsp")),
        ),
        Drawn(
            "vsp_direction.svg",
            "Direction-only rate % (the asked sign, any size) per model, dim and turn pair, with "
            f"95% CIs; {n} shared samples, n ok / n per row in the figure",
            render(vsp_figure(tables["dims"], models, rate="vsp_direction")),
        ),
    ]
    change = tables.get("change") or []
    for dim in (d for d in DIMS if any(r["dim"] == d for r in change)):
        out.append(
            Drawn(
                f"change-{dim}.svg",
                f"{dim}: mean change from turn 1 per turn and model, per direction and language "
                "(tables.change in compare.json), n per point in each panel's title",
                render(change_figure(dim, change, models, dimension(dim).words["change"])),
            )
        )
    quality = (result.get("quality") or {}).get("changes") or []
    if any(r.get("d_ovrl") is not None for r in quality):
        out.append(
            Drawn(
                "quality.svg",
                "Speech quality (DNSMOS P.835): change from turn 1 per model, paired per sample, "
                "n per model in the figure",
                render(quality_figure(quality, models)),
            )
        )
    return out


def draw_or_say_why(result: Mapping[str, Any]) -> tuple[list[Drawn], str | None]:
    """The figures, or none and why (matplotlib missing)."""
    try:
        return comparison_figures(result), None
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("matplotlib"):
            raise  # a missing core dependency is a broken install, not a missing extra
        return [], NO_MATPLOTLIB


def write_figures(out: Path, figures: Sequence[Drawn]) -> list[Path]:
    """Write the figure files into ``out/figures/``; figure files left there by an earlier
    comparison that this one did not draw are removed (they would look current)."""
    from stylebench.atomic import write_bytes

    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    names = {f.name for f in figures}
    for old in sorted(folder.glob("*.svg")):
        if old.name not in names:
            old.unlink()
    return [write_bytes(folder / f.name, f.data) for f in figures]


def figures_md(figures: Sequence[Drawn], why: str | None) -> list[str]:
    """compare.md's figure section: each figure linked by its relative path."""
    if why:
        return ["", "## Figures", "", why]
    if not figures:
        return []
    lines = ["", "## Figures", ""]
    for f in figures:
        lines += [f"![{f.caption}]({FOLDER}/{f.name})", ""]
    return lines


def figures_html(figures: Sequence[Drawn], why: str | None) -> list[str]:
    """The page's figure section: each figure inline (a data URI, as the page's CSP allows)."""
    if why:
        return [f"<h2>Figures</h2><p>{escape(why)}</p>"]
    if not figures:
        return []
    return [
        '<h2>Figures</h2><div class="figures">'
        + "".join(
            f'<figure class="figure"><img style="width:auto;max-width:100%" '
            f'alt="{escape(f.caption, quote=True)}" '
            f'data-figure="{escape(f.name, quote=True)}" '
            f'src="data:{f.mime};base64,{base64.b64encode(f.data).decode()}">'
            f"<figcaption>{escape(f.caption)} ({escape(FOLDER)}/{escape(f.name)})</figcaption>"
            "</figure>"
            for f in figures
        )
        + "</div>"
    ]
