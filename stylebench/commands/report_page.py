"""``report.html``: one run's page beside its ``report.md``, the way ``compare.html`` shows
several runs.

The page holds the run's figure (``trajectories.png``, inline), its cell tables (VSP, the
direction-only rate, SVD, signed change, n ok / n per cell, sortable; each VSP links to the
cell's samples), the rest of ``report.md`` (its optional sections and notes, as Markdown), and
per cell its samples with their audio, text channel and transcript. The samples come from
:func:`stylebench.compare.html_parts.sample_section` and the tables from
:func:`stylebench.report.html_table.table`, so every piece of text is escaped as on the
comparison page; the page has the same Content-Security-Policy and its one script only sorts
tables. Audio is linked by its path inside the run folder.
"""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from stylebench.commands.scored import ScoredRun
from stylebench.report.sections import Section
from stylebench.report.write import PLOT_NAME

PAGE_NAME = "report.html"


@dataclass(frozen=True)
class PageRun:
    """The run as the samples sections read it (:class:`~stylebench.compare.html_parts.SampleRun`)."""

    scored: ScoredRun


def _cell_name(c: Mapping[str, Any]) -> str:
    return " ".join(x for x in (c["dim"], c["direction"], c["lang"], c["pair"], c["group"]) if x)


def _audio_src(run: PageRun, rel: str) -> str | None:
    """The reply's audio by its path inside the run folder (the page's own folder)."""
    if not rel or not (run.scored.root / rel).is_file():
        return None
    return urllib.parse.quote(Path(rel).as_posix())


def _figure(root: Path, report: Mapping[str, Any]) -> str:
    path = root / PLOT_NAME
    if not path.is_file():
        return f"<p>{escape(report.get('plot') or 'no plot')}</p>"
    data = base64.b64encode(path.read_bytes()).decode()
    return (
        '<figure class="figure"><img alt="mean change from turn 1 per turn, one panel per dim" '
        f'data-figure="{PLOT_NAME}" src="data:image/png;base64,{data}">'
        "<figcaption>Mean change from turn 1 per turn (95% t-interval of the mean), one line per "
        f"direction and language ({PLOT_NAME})</figcaption></figure>"
    )


def _cells_table(dim: str, cells: Sequence[Mapping[str, Any]], anchors: Mapping[str, str]) -> str:
    from stylebench.metrics.dims.base import dimension
    from stylebench.report.html_table import html_num, table

    grouped = any(c["group"] for c in cells)
    head = ["direction", "lang", "pair", *(["group"] if grouped else [])]
    head += [
        "VSP % [95% CI]",
        "direction-only % [95% CI]",
        f"SVD {dimension(dim).words['svd']} [95% CI]",
        f"mean change ({dimension(dim).unit})",
        "n ok / n",
        "flagged",
    ]
    rows = []
    for c in cells:
        key = [c["direction"], c["lang"], c["pair"], *([c["group"]] if grouped else [])]
        rows.append(
            [
                *((k, k) for k in key),
                (html_num(c["vsp"], c["vsp_ci"]), c["vsp"], anchors[_cell_name(c)]),
                (html_num(c["vsp_direction"], c["vsp_direction_ci"]), c["vsp_direction"]),
                (html_num(c["svd"], c["svd_ci"], 2), c["svd"]),
                (html_num(c["change_mean"], None, 2), c["change_mean"]),
                (f"{c['n_ok']}/{c['n']}", c["n_ok"]),
                (str(c["n_flagged"]), c["n_flagged"]),
            ]
        )
    errors = [
        f"<li>{escape(_cell_name(c))}: "
        + escape(", ".join(f"{reason} ({k})" for reason, k in c["errors"].items()))
        + "</li>"
        for c in cells
        if c["errors"]
    ]
    return (
        f"<h2>{escape(dim)}</h2>"
        + table(f"cells-{dim}", head, rows)
        + (f"<p>Failed samples (not in n ok):</p><ul>{''.join(errors)}</ul>" if errors else "")
    )


def render_report_page(
    report: Mapping[str, Any], scored: ScoredRun, sections: Sequence[Section]
) -> str:
    """The page of the run ``scored`` whose report dict is ``report`` (as written to
    report.json); ``sections`` are report.md's optional sections."""
    from stylebench.compare.html_parts import CSP, SCRIPT, STYLE, sample_section
    from stylebench.compare.samples import outcomes
    from stylebench.report.sections import in_place

    run = PageRun(scored)
    per_cell = outcomes(scored.turn_scores, scored.thresholds, exclude=scored.exclude)
    cells = report["cells"]
    anchors = {_cell_name(c): f"s-{i}" for i, c in enumerate(cells)}
    not_eligible = report.get("eligible") is False
    parts = [
        f"<h1>stylebench: {escape(str(report['model']))} (run {escape(str(report['run_id']))})"
        "</h1>",
        f"<p>Samples: {report['n_samples']}; turns ok: {report['n_turns_ok']}/"
        f"{report['n_turns_total']}. VSP = valid / ok samples (the asked sign and at least the "
        "threshold); direction-only = ok samples whose change has the asked sign, any size "
        "(docs/metrics.md#change-between-turns); SVD over valid samples.</p>",
    ]
    if not_eligible:
        parts.append(
            "<p><strong>Not eligible for style scores</strong> (failed the relevance gate): the "
            "cells below are kept for inspection only.</p>"
        )
    parts.append("<h2>Figure</h2>" + _figure(scored.root, report))
    dims = list(report.get("dims") or [])
    dims += sorted({c["dim"] for c in cells} - set(dims), key=str)
    for dim in dims:
        mine = [c for c in cells if c["dim"] == dim]
        if mine:
            parts.append(_cells_table(dim, mine, anchors))
    rest = [line for s in in_place(sections) for line in s.markdown(dict(report))]
    if rest:
        parts.append(
            '<h2>The rest of report.md</h2><pre class="md">' + escape("\n".join(rest)) + "</pre>"
        )
    samples = []
    for c in cells:
        key = (c["dim"], c["direction"], c["lang"], c["pair"], c["group"])
        samples.append(
            sample_section(
                str(report["model"]),
                _cell_name(c),
                c,
                run,
                per_cell.get(key, {}),
                _audio_src,
                anchor=anchors[_cell_name(c)],
            )
        )
    parts.append("<h2>Samples</h2>" + "".join(samples))
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>stylebench: {escape(str(report['model']))}</title><style>{STYLE}"
        "pre.md{white-space:pre-wrap;font-size:85%}</style></head><body>"
        + "".join(parts)
        + f"<script>{SCRIPT}</script></body></html>\n"
    )


def write_report_page(
    report: Mapping[str, Any], scored: ScoredRun, sections: Sequence[Section]
) -> Path:
    """Write ``report.html`` into the run folder (atomically); its path."""
    from stylebench.atomic import write_text

    return write_text(scored.root / PAGE_NAME, render_report_page(report, scored, sections))
