"""The comparison as Markdown (what ``stylebench compare`` prints): leaderboard, the paper's
tables, and per cell each model's VSP with the pairwise tests."""

from __future__ import annotations

from typing import Any

from stylebench.report.md_text import fmt_ci, md_escape, md_table


def _p(x: float | None) -> str:
    return "–" if x is None else (f"{x:.2g}" if x < 0.001 else f"{x:.3f}")


def _elig(e: bool | None) -> str:
    return {True: "yes", False: "**no**", None: "unknown"}[e]


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


def quality_markdown(result: dict[str, Any]) -> list[str]:
    """Speech quality (DNSMOS) per model and turn, and its change from turn 1 with its CI."""
    from stylebench.report.sections.quality import CHANGE_HEAD, TURN_HEAD, quality_rows

    q = result.get("quality") or {}
    if not q.get("turns"):
        return []
    turns, changes = quality_rows(q, key="model")
    lines = ["", "## Speech quality per model and turn (DNSMOS P.835, 1-5)", ""]
    lines += md_table(("model", *TURN_HEAD[1:]), turns)
    lines += ["", "Change from turn 1, paired per sample (bootstrap CI):", ""]
    lines += md_table(("model", *CHANGE_HEAD[1:]), changes)
    return lines


def render_md(result: dict[str, Any]) -> str:
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
                _elig(s["eligible"]),
            )
            for s in result["leaderboard"]
        ],
    )
    if note := not_carried_note(result):
        lines += ["", md_escape(note)]
    t = result["tables"]
    lines += ["", "## SRD / MRD and eligibility (Table 2)", ""]
    lines += md_table(
        ("model", "SRD % [CI]", "MRD % [CI]", "n judged", "eligible"),
        [
            (
                md_escape(r["model"]),
                fmt_ci(r["srd"], r["srd_ci"]),
                fmt_ci(r["mrd"], r["mrd_ci"]),
                str(r["n_judged"] if r["n_judged"] is not None else "–"),
                _elig(r["eligible"]),
            )
            for r in t["relevance"]
        ],
    )
    if t["emotion"]:
        lines += ["", "## Emotion VSP per emotion and turn pair (Table 3)", ""]
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
    lines += ["", "## VSP and SVD per dim and turn pair (Table 4)", ""]
    lines += md_table(
        ("model", "dim", "pair", "VSP % [CI]", "SVD % [CI]", "n ok / n"),
        [
            (
                md_escape(r["model"]),
                r["dim"] + (" (prosodic)" if r["source"] == "prosodic" else ""),
                r["pair"],
                fmt_ci(r["vsp"], r["vsp_ci"]),
                fmt_ci(r["svd"], r["svd_ci"]),
                f"{r['n_ok']}/{r['n']}",
            )
            for r in t["dims"]
        ],
    )
    lines += ["", "## Turn-3 retention (VSP 2-3 vs 1-2, paired)", ""]
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
    lines += quality_markdown(result)
    lines += ["", "## Cells", ""]
    for b in result["cells"]:
        name = f"{b['dim']} {b['direction']} {b['lang']} {b['pair']}" + (
            f" {b['group']}" if b["group"] else ""
        )
        lines += [f"### {md_escape(name)}", ""]
        lines += md_table(
            ("model", "VSP % [CI]", "SVD % [CI]", "n ok / n"),
            [
                (
                    md_escape(m),
                    fmt_ci(c["vsp"], c["vsp_ci"]),
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
    if result["notes"]:
        lines += ["## Notes", ""] + [f"- {md_escape(n)}" for n in result["notes"]]
    return "\n".join(lines) + "\n"
