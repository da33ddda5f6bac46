"""The comparison as Markdown (what ``stylebench compare`` prints): leaderboard, the paper's
tables, and per cell each model's VSP with the pairwise tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.report.md_text import eligible_md, fmt_ci, md_escape, md_table
from stylebench.stages import registry
from stylebench.stages.outputs import COMPARE_SHOWN_AT, placed


def _p(x: float | None) -> str:
    return "–" if x is None else (f"{x:.2g}" if x < 0.001 else f"{x:.3f}")


#: what a leaderboard shows instead of the style number of a model that failed the gate
NOT_CARRIED = "— (not eligible)"


def not_carried_note(result: dict[str, Any]) -> str | None:
    """The line under the leaderboard naming the models whose style numbers are not carried
    forward, or None when every model is."""
    out = [s["model"] for s in result["leaderboard"] if not s["carried_forward"]]
    if not out:
        return None
    return (
        f"Not eligible (failed the relevance gate): {', '.join(out)}. Their style numbers are "
        "not carried forward: no mean VSP, ranked last; their cells below are for inspection only."
    )


def render_md(result: dict[str, Any], figures: Sequence[str] = ()) -> str:
    """The comparison as Markdown; ``figures`` are the lines of its figure section
    (:func:`stylebench.compare.figures.figures_md`), shown after the leaderboard."""
    lines = ["# stylebench comparison", ""]
    lines += [
        f"{result['n_shared']} shared samples; models {', '.join(md_escape(m) for m in result['models'])}"
        f" (calibration rows: {', '.join(result['calibration']) or 'none'}). "
        f"Bootstrap {result['settings']['n_boot']} resamples, cluster "
        f"{result['settings']['cluster']}; p-values Holm-adjusted per cell.",
        "",
    ]
    lines += ["## Leaderboard (mean VSP over acoustic cells)", ""]
    lines += md_table(
        ("model", "mean VSP %", "cells", "SRD %", "MRD %", "eligible"),
        [
            (
                md_escape(s["model"]) + (" (calibration)" if s["calibration"] else ""),
                fmt_ci(s["mean_vsp"], None) if s["carried_forward"] else NOT_CARRIED,
                str(s["n_cells"]),
                fmt_ci(s["srd"], None),
                fmt_ci(s["mrd"], None),
                eligible_md(s["eligible"]),
            )
            for s in result["leaderboard"]
        ],
    )
    if note := not_carried_note(result):
        lines += ["", md_escape(note)]
    t = result["tables"]
    shown: list[tuple[int, list[str]]] = [(COMPARE_SHOWN_AT["leaderboard"], lines)]
    shown.append((COMPARE_SHOWN_AT["figures"], list(figures)))
    lines = []
    if t["emotion"]:
        lines = ["", "## Emotion VSP per emotion and turn pair (Table 3)", ""]
        lines += md_table(
            ("model", "emotion", "pair", "source", "VSP % [CI]", "n ok / n"),
            [
                (
                    md_escape(r["model"]),
                    md_escape(r["emotion"]),
                    r["pair"],
                    r["source"],
                    fmt_ci(r["vsp"], r["vsp_ci"]),
                    f"{r['n_ok']}/{r['n']}",
                )
                for r in t["emotion"]
            ],
        )
    shown.append((COMPARE_SHOWN_AT["emotion"], lines))
    lines = ["", "## VSP and SVD per dim and turn pair (Table 4)", ""]
    lines += md_table(
        ("model", "dim", "pair", "VSP % [CI]", "direction-only % [CI]", "SVD % [CI]", "n ok / n"),
        [
            (
                md_escape(r["model"]),
                r["dim"] + (" (prosodic)" if r["source"] == "prosodic" else ""),
                r["pair"],
                fmt_ci(r["vsp"], r["vsp_ci"]),
                fmt_ci(r["vsp_direction"], r["vsp_direction_ci"]),
                fmt_ci(r["svd"], r["svd_ci"]),
                f"{r['n_ok']}/{r['n']}",
            )
            for r in t["dims"]
        ],
    )
    shown.append((COMPARE_SHOWN_AT["dims"], lines))
    lines = ["", "## Turn-3 retention (VSP 2-3 vs 1-2, paired)", ""]
    lines += md_table(
        ("model", "dim", "n", "VSP 1-2", "VSP 2-3", "diff [CI]", "McNemar p"),
        [
            (
                md_escape(r["model"]),
                r["dim"],
                str(r["n"]),
                fmt_ci(r.get("vsp_12"), None),
                fmt_ci(r.get("vsp_23"), None),
                fmt_ci(r.get("diff"), r.get("diff_ci")),
                _p(r.get("mcnemar_p")),
            )
            for r in t["retention"]
        ],
    )
    shown.append((COMPARE_SHOWN_AT["retention"], lines))
    lines = ["", "## Cells", ""]
    for b in result["cells"]:
        name = f"{b['dim']} {b['direction']} {b['lang']} {b['pair']}" + (
            f" {b['group']}" if b["group"] else ""
        )
        lines += [f"### {md_escape(name)}", ""]
        lines += md_table(
            ("model", "VSP % [CI]", "direction-only % [CI]", "SVD % [CI]", "n ok / n"),
            [
                (
                    md_escape(m),
                    fmt_ci(c["vsp"], c["vsp_ci"]),
                    fmt_ci(c["vsp_direction"], c["vsp_direction_ci"]),
                    fmt_ci(c["svd"], c["svd_ci"]),
                    f"{c['n_ok']}/{c['n']}",
                )
                for m, c in b["models"].items()
                if c is not None
            ],
        )
        lines += [""]
        lines += md_table(
            (
                "A vs B",
                "n",
                "VSP diff B-A [CI]",
                "McNemar p (Holm)",
                "signed change A / B",
                "Wilcoxon p (Holm)",
            ),
            [
                (
                    md_escape(f"{r['a']} vs {r['b']}"),
                    str(r["n"]),
                    fmt_ci(r["vsp_diff"], r["vsp_diff_ci"]),
                    "–"
                    if r["mcnemar"] is None
                    else f"{_p(r['mcnemar']['p'])} ({_p(r['mcnemar']['p_holm'])})",
                    "–"
                    if r["signed_change_a"] is None
                    else f"{r['signed_change_a']:.2f} / {r['signed_change_b']:.2f}",
                    "–"
                    if r["wilcoxon"] is None
                    else f"{_p(r['wilcoxon']['p'])} ({_p(r['wilcoxon']['p_holm'])})",
                )
                for r in b["pairwise"]
            ],
        )
        mu = b["multi"]
        if mu and mu["cochran_q"]:
            groups = "; ".join("{" + ", ".join(md_escape(m) for m in g) + "}" for g in mu["groups"])
            lines += [
                "",
                f"Cochran's Q = {mu['cochran_q']['statistic']:.2f} (p {_p(mu['cochran_q']['p'])}), "
                f"Friedman = {mu['friedman']['statistic']:.2f} (p {_p(mu['friedman']['p'])}) on "
                f"{mu['n']} samples; groups the data cannot separate: {groups}",
            ]
        lines += [""]
    shown.append((COMPARE_SHOWN_AT["cells"], lines))
    for spec in registry.STAGES:  # each stage's tables, at their places
        for part in spec.compare:
            shown.append((part.shown_at, part.markdown(stage_table(result, part.key))))
    lines = [line for part_lines in placed(shown) for line in part_lines]
    if result["notes"]:
        lines += ["## Notes", ""] + [f"- {md_escape(n)}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


def stage_table(result: Mapping[str, Any], key: str) -> Any:
    """A stage's table in a comparison, by its key (``quality``, ``tables.relevance``)."""
    value: Any = result
    for name in key.split("."):
        value = (value or {}).get(name)
    return value
