"""The "Human ratings" section of a run's Markdown report (from the report's ``human`` block)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _num(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _vsp(c: Mapping[str, Any]) -> str:
    if c["vsp"] is None:
        return "–"
    ci = c["vsp_ci"]
    return f"{c['vsp']:.1f}" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]


def human_markdown(human: Mapping[str, Any]) -> list[str]:
    """Markdown lines: QC, human VSP per cell, agreement. Outside text is escaped."""
    from stylebench.report import md_escape

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
    lines += _table(
        ["rater", "attention accuracy", "answers", "kept"],
        [
            [md_escape(r["rater_id"]),
             "no checks" if r["check_accuracy"] is None else f"{100 * r['check_accuracy']:.0f}%",
             str(r["n_answered"]), "yes" if r["kept"] else "**dropped**"]
            for r in human["raters"]
        ],
    )  # fmt: skip
    lines.append("")
    lines += _table(
        ["dim", "direction", "lang", "group", "pair", "human VSP % [95% CI]", "intensity change",
         "judged/n", "ties"],
        [
            [md_escape(c["dim"]), md_escape(c["direction"]), md_escape(c["lang"]),
             md_escape(c["group"] or "–"), md_escape(c["pair"]), _vsp(c),
             _num(c["intensity_change_mean"]), f"{c['n_judged']}/{c['n']}", str(c["n_tie"])]
            for c in human["cells"]
        ],
    )  # fmt: skip
    ch, it = human["agreement"]["choice"], human["agreement"]["intensity"]
    lines += [
        "",
        "Agreement among kept raters on sample items (checks excluded; – = undefined):",
        "",
    ]
    lines += _table(
        ["ratings", "Krippendorff's alpha", "Fleiss' kappa", "pairwise agreement %", "units",
         "raters"],
        [
            ["forced choice", f"{_num(ch['alpha_nominal'], 3)} (nominal)",
             _num(ch["fleiss_kappa"], 3), _num(ch["pairwise_agreement"], 1), str(ch["n_units"]),
             str(ch["n_raters"])],
            ["intensity 1-5", f"{_num(it['alpha_ordinal'], 3)} (ordinal), "
             f"{_num(it['alpha_interval'], 3)} (interval)", "–",
             _num(it["pairwise_agreement"], 1), str(it["n_units"]), str(it["n_raters"])],
        ],
    )  # fmt: skip
    return lines + [""]
