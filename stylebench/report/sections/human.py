"""Markdown of the imported listening test: the report's ``human`` block as tables.

The block is written by :func:`stylebench.ratings.importer.human_report_block`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.report.md_text import fmt_ci, md_escape, md_table


def _num(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def human_markdown(human: Mapping[str, Any]) -> list[str]:
    """Markdown lines: QC, human VSP per cell, agreement. Outside text is escaped."""
    pct = f"{100 * human['min_attention']:.0f}%"
    lines = [
        "## Human ratings",
        "",
        f"Listening test {md_escape(human['test_id'])}: {human['n_raters']} raters, "
        f"{human['n_kept']} kept (attention-check accuracy >= {pct} over "
        f"{human['n_checks']} check items; an unanswered check counts as wrong). Human VSP = "
        "share of judged samples whose rater majority heard the later turn as stronger "
        "(intensify) or weaker (attenuate); a tie counts as not valid. Intensity change = mean "
        "over samples and raters of the later minus the earlier 1-5 rating.",
        "",
    ]
    lines += md_table(
        ["rater", "attention accuracy", "answers", "kept"],
        [
            [
                md_escape(r["rater_id"]),
                "no checks" if r["check_accuracy"] is None else f"{100 * r['check_accuracy']:.0f}%",
                str(r["n_answered"]),
                "yes" if r["kept"] else "**dropped**",
            ]
            for r in human["raters"]
        ],
    )
    lines.append("")
    lines += md_table(
        [
            "dim",
            "direction",
            "lang",
            "group",
            "pair",
            "human VSP % [95% CI]",
            "intensity change",
            "judged/n",
            "ties",
        ],
        [
            [
                md_escape(c["dim"]),
                md_escape(c["direction"]),
                md_escape(c["lang"]),
                md_escape(c["group"] or "–"),
                md_escape(c["pair"]),
                fmt_ci(c["vsp"], c["vsp_ci"]),
                _num(c["intensity_change_mean"]),
                f"{c['n_judged']}/{c['n']}",
                str(c["n_tie"]),
            ]
            for c in human["cells"]
        ],
    )
    ch, it = human["agreement"]["choice"], human["agreement"]["intensity"]
    lines += [
        "",
        "Agreement among kept raters on sample items (checks excluded; – = undefined):",
        "",
    ]
    lines += md_table(
        [
            "ratings",
            "Krippendorff's alpha",
            "Fleiss' kappa",
            "pairwise agreement %",
            "units",
            "raters",
        ],
        [
            [
                "forced choice",
                f"{_num(ch['alpha_nominal'], 3)} (nominal)",
                _num(ch["fleiss_kappa"], 3),
                _num(ch["pairwise_agreement"], 1),
                str(ch["n_units"]),
                str(ch["n_raters"]),
            ],
            [
                "intensity 1-5",
                f"{_num(it['alpha_ordinal'], 3)} (ordinal), "
                f"{_num(it['alpha_interval'], 3)} (interval)",
                "–",
                _num(it["pairwise_agreement"], 1),
                str(it["n_units"]),
                str(it["n_raters"]),
            ],
        ],
    )
    return lines + [""]
