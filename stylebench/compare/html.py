"""The comparison as one self-contained HTML file (no network, no external resources).

Every piece of text is escaped with :func:`html.escape` when the page is made (model replies and
transcripts are untrusted); the only script sorts tables by the ``data-v`` values of their cells
and never writes markup. Plots are embedded PNGs. A cell's samples, with their audio, are a page
of their own that the cell's value links to (:mod:`stylebench.compare.sample_pages`), so the page
stays small at any scale. The Content-Security-Policy allows nothing from the network.
"""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from stylebench.compare.html_parts import CSP, SCRIPT, STYLE
from stylebench.compare.load import RunData
from stylebench.compare.md import NOT_CARRIED, not_carried_note, stage_table
from stylebench.compare.sample_pages import cell_name, page_name
from stylebench.report.html_table import ELIGIBLE_TEXT, html_num, table
from stylebench.stages import registry
from stylebench.stages.outputs import COMPARE_SHOWN_AT, placed


def _plot(run: RunData) -> str:
    """The run's trajectory plot as an ``<img>``, or why there is none."""
    try:
        from stylebench.report.plots import plot_trajectories

        with tempfile.TemporaryDirectory() as tmp:
            path = plot_trajectories(
                run.scored.turn_scores,
                Path(tmp) / "t.png",
                title=run.label,
                exclude=run.scored.exclude,
            )
            data = base64.b64encode(path.read_bytes()).decode()
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("matplotlib"):
            raise
        return "<p>no plot: matplotlib is not installed (the [plot] extra)</p>"
    except ValueError as exc:
        return f"<p>no plot: {escape(str(exc))}</p>"
    return f'<img alt="trajectories of {escape(run.label)}" src="data:image/png;base64,{data}">'


def render_html(
    result: dict[str, Any], runs: Sequence[RunData], out: Path, *, figures: Sequence[str] = ()
) -> str:
    """The page for ``result`` (from :func:`stylebench.compare.build.compare_runs`) of ``runs``,
    to be written into the folder ``out``: its links to the cells' sample pages are relative to
    it (:func:`stylebench.compare.sample_pages.sample_pages` makes them). ``figures`` are its
    figure section's HTML (:func:`stylebench.compare.figures.figures_html`), shown after the
    leaderboard."""
    from stylebench.compare.build import unique_labels

    by_label = {r.label: r for r in unique_labels(runs)}  # the labels compare_runs gave them
    models = result["models"]
    parts = [
        f"<h1>stylebench comparison</h1><p>{result['n_shared']} shared samples; "
        f"calibration rows: {escape(', '.join(result['calibration']) or 'none')}; bootstrap "
        f"{result['settings']['n_boot']} resamples, cluster {escape(result['settings']['cluster'])}; "
        "pairwise p-values Holm-adjusted per cell.</p>"
    ]
    elig = ELIGIBLE_TEXT
    parts.append(
        "<h2>Leaderboard</h2>"
        + table(
            "leaderboard",
            ("model", "mean VSP % (acoustic cells)", "cells", "SRD %", "MRD %", "eligible"),
            [
                [
                    (s["model"] + (" (calibration)" if s["calibration"] else ""), s["model"]),
                    (
                        html_num(s["mean_vsp"]) if s["carried_forward"] else NOT_CARRIED,
                        s["mean_vsp"],
                    ),
                    (str(s["n_cells"]), s["n_cells"]),
                    (html_num(s["srd"]), s["srd"]),
                    (html_num(s["mrd"]), s["mrd"]),
                    (elig[s["eligible"]], elig[s["eligible"]]),
                ]
                for s in result["leaderboard"]
            ],
        )
        + (f"<p>{escape(note)}</p>" if (note := not_carried_note(result)) else "")
    )
    t = result["tables"]
    shown: list[tuple[int, list[str]]] = [(COMPARE_SHOWN_AT["leaderboard"], parts)]
    shown.append((COMPARE_SHOWN_AT["figures"], list(figures)))
    parts = []
    if t["emotion"]:
        parts.append(
            "<h2>Emotion VSP per emotion and turn pair (Table 3)</h2>"
            + table(
                "emotion",
                ("model", "emotion", "pair", "source", "VSP % [CI]", "n ok / n"),
                [
                    [
                        (r["model"], r["model"]),
                        (r["emotion"], r["emotion"]),
                        (r["pair"], r["pair"]),
                        (r["source"], r["source"]),
                        (html_num(r["vsp"], r["vsp_ci"]), r["vsp"]),
                        (f"{r['n_ok']}/{r['n']}", r["n_ok"]),
                    ]
                    for r in t["emotion"]
                ],
            )
        )
    shown.append((COMPARE_SHOWN_AT["emotion"], parts))
    parts = []
    parts.append(
        "<h2>VSP and SVD per dim and turn pair (Table 4)</h2>"
        + table(
            "dims",
            (
                "model",
                "dim",
                "pair",
                "VSP % [CI]",
                "direction-only % [CI]",
                "SVD % [CI]",
                "n ok / n",
            ),
            [
                [
                    (r["model"], r["model"]),
                    (r["dim"] + (" (prosodic)" if r["source"] == "prosodic" else ""), r["dim"]),
                    (r["pair"], r["pair"]),
                    (html_num(r["vsp"], r["vsp_ci"]), r["vsp"]),
                    (html_num(r["vsp_direction"], r["vsp_direction_ci"]), r["vsp_direction"]),
                    (html_num(r["svd"], r["svd_ci"], 2), r["svd"]),
                    (f"{r['n_ok']}/{r['n']}", r["n_ok"]),
                ]
                for r in t["dims"]
            ],
        )
    )
    shown.append((COMPARE_SHOWN_AT["dims"], parts))
    parts = []
    parts.append(
        "<h2>Turn-3 retention (VSP 2-3 vs 1-2)</h2>"
        + table(
            "retention",
            ("model", "dim", "n", "VSP 1-2", "VSP 2-3", "diff [CI]", "McNemar p"),
            [
                [
                    (r["model"], r["model"]),
                    (r["dim"], r["dim"]),
                    (str(r["n"]), r["n"]),
                    (html_num(r.get("vsp_12")), r.get("vsp_12")),
                    (html_num(r.get("vsp_23")), r.get("vsp_23")),
                    (html_num(r.get("diff"), r.get("diff_ci")), r.get("diff")),
                    (html_num(r.get("mcnemar_p"), None, 4), r.get("mcnemar_p")),
                ]
                for r in t["retention"]
            ],
        )
    )
    shown.append((COMPARE_SHOWN_AT["retention"], parts))
    parts = []
    rows, tests = [], []
    for i, b in enumerate(result["cells"]):
        row: list[tuple[str, Any] | tuple[str, Any, str]] = [(cell_name(b), cell_name(b))]
        for j, m in enumerate(models):
            c = b["models"].get(m)
            if c is None:
                row.append(("–", None))
                continue
            row.append(
                (
                    f"{html_num(c['vsp'], c['vsp_ci'])} · dir {html_num(c['vsp_direction'])}"
                    f" · SVD {html_num(c['svd'], None, 2)} · {c['n_ok']}/{c['n']}",
                    c["vsp"],
                    page_name(i, j),  # its samples: a page of their own (sample_pages.py)
                )
            )
        rows.append(row)
        tests.append(
            f"<details><summary>{escape(cell_name(b))}: pairwise tests</summary>"
            + table(
                f"tests-{i}",
                (
                    "A vs B",
                    "n",
                    "VSP diff B−A [CI]",
                    "McNemar p (Holm)",
                    "signed change A / B",
                    "Wilcoxon p (Holm)",
                ),
                [
                    [
                        (f"{r['a']} vs {r['b']}", r["a"]),
                        (str(r["n"]), r["n"]),
                        (html_num(r["vsp_diff"], r["vsp_diff_ci"]), r["vsp_diff"]),
                        (
                            "–"
                            if r["mcnemar"] is None
                            else f"{r['mcnemar']['p']:.4g} ({r['mcnemar']['p_holm']:.4g})",
                            None if r["mcnemar"] is None else r["mcnemar"]["p"],
                        ),
                        (
                            "–"
                            if r["signed_change_a"] is None
                            else f"{r['signed_change_a']:.2f} / {r['signed_change_b']:.2f}",
                            r["signed_change_a"],
                        ),
                        (
                            "–"
                            if r["wilcoxon"] is None
                            else f"{r['wilcoxon']['p']:.4g} ({r['wilcoxon']['p_holm']:.4g})",
                            None if r["wilcoxon"] is None else r["wilcoxon"]["p"],
                        ),
                    ]
                    for r in b["pairwise"]
                ],
            )
            + _groups(b)
            + "</details>"
        )
    parts.append(
        "<h2>Cells (VSP % [CI] · direction-only % · SVD % · n ok / n; click a value for its"
        " samples)</h2>" + table("cells", ("cell", *models), rows)
    )
    parts.append("<h2>Pairwise tests</h2>" + "".join(tests))
    parts.append(
        '<h2>Trajectories</h2><div class="plots">'
        + "".join(
            f"<figure>{_plot(by_label[m])}<figcaption>{escape(m)}</figcaption></figure>"
            for m in models
        )
        + "</div>"
    )
    parts.append(
        "<h2>Provenance</h2>"
        + table(
            "provenance",
            (
                "model",
                "fingerprint",
                "dialogue set",
                "ASR",
                "ASR CPU",
                "judge",
                "stylebench",
                "manifest sha256",
            ),
            [
                [(s["model"], s["model"])]
                + [
                    (str(s["provenance"].get(k)), str(s["provenance"].get(k)))
                    for k in (
                        "model_fingerprint",
                        "dialogue_checksum",
                        "asr",
                        "asr_cpu",
                        "judge",
                        "stylebench_version",
                        "manifest_sha256",
                    )
                ]
                for s in result["leaderboard"]
            ],
        )
    )
    if result["notes"]:
        parts.append(
            "<h2>Notes</h2><ul>"
            + "".join(f"<li>{escape(n)}</li>" for n in result["notes"])
            + "</ul>"
        )
    shown.append((COMPARE_SHOWN_AT["cells"], parts))
    for spec in registry.STAGES:  # each stage's tables, at their places
        for part in spec.compare:
            shown.append((part.shown_at, part.html(stage_table(result, part.key))))
    parts = [piece for pieces in placed(shown) for piece in pieces]
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>stylebench comparison</title><style>{STYLE}</style></head><body>"
        + "".join(parts)
        + f"<script>{SCRIPT}</script></body></html>\n"
    )


def _groups(b: dict[str, Any]) -> str:
    mu = b["multi"]
    if not mu or not mu["cochran_q"]:
        return ""
    groups = "; ".join("{" + ", ".join(g) + "}" for g in mu["groups"])
    return (
        f"<p>Cochran's Q = {mu['cochran_q']['statistic']:.2f} (p {mu['cochran_q']['p']:.4g}), Friedman = "
        f"{mu['friedman']['statistic']:.2f} (p {mu['friedman']['p']:.4g}) on {mu['n']} samples; "
        f"groups the data cannot separate: {escape(groups)}</p>"
    )
