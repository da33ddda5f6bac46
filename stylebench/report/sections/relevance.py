"""Markdown of the relevance judge: the not-eligible banner and the "Relevance" table.

Reads the keys :func:`stylebench.scoring.relevance.report_block` put into the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.report.md_text import md_escape, md_table


def _pct(d: Mapping[str, Any]) -> str:
    if d.get("rate") is None:
        return "–"
    ci = d.get("ci")
    return f"{d['rate']:.1f}" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")


def banner_markdown(report: Mapping[str, Any]) -> list[str]:
    """The not-eligible banner printed under a report's title (empty when eligible/unknown)."""
    if report.get("eligible") is not False:
        return []
    rel = report.get("relevance", {})
    mrd = rel.get("mrd", {})
    ci = f" (95% CI {mrd['ci'][0]:.1f}-{mrd['ci'][1]:.1f})" if mrd.get("ci") else ""
    return [
        f"> **Not eligible for style scores:** MRD {report.get('mrd'):.1f}%{ci} is at or under "
        f"the {rel.get('threshold', 40):g}% gate. The style cells below are kept for "
        "inspection and each is marked ✗; they are not comparable with eligible models.",
        "",
    ]


def relevance_markdown(report: Mapping[str, Any]) -> list[str]:
    """The report's "Relevance (judge)" section: judge, gate, SRD/MRD overall and per cell."""
    judge = report.get("judge") or {}
    rel = report.get("relevance") or {}
    who = md_escape(f"{judge.get('backend', '?')} {judge.get('model') or ''}".strip())
    lines = ["## Relevance (judge)", ""]
    if judge.get("skipped"):
        why = md_escape(judge["skipped"])
        return lines + [f"Judge {who} skipped: {why}. Eligibility unknown.", ""]
    gate = {True: "eligible", False: "NOT eligible", None: "unknown"}[report.get("eligible")]
    filtered = ""
    if rel.get("filter_mrd"):
        filtered = f" filter_mrd on: {rel.get('n_excluded', 0)} samples left out of style scores."
    lines += [
        f"Judge: {who}. Gate: MRD > {rel.get('threshold', 40):g}% -> **{gate}**.{filtered}",
        "",
    ]
    rows = [("all", rel.get("srd", {}), rel.get("mrd", {}))]
    rows += [(f"{c['dim']} {c['lang']}", c["srd"], c["mrd"]) for c in rel.get("by_cell", [])]
    head = [
        "scope",
        "SRD % [95% CI]",
        "n judged/n",
        "MRD % [95% CI]",
        "n judged/n",
        "unparseable (SRD/MRD)",
    ]
    table = [
        [
            md_escape(scope),
            _pct(s),
            f"{s.get('n_judged', 0)}/{s.get('n', 0)}",
            _pct(m),
            f"{m.get('n_judged', 0)}/{m.get('n', 0)}",
            f"{s.get('n_unparseable', 0)}/{m.get('n_unparseable', 0)}",
        ]
        for scope, s, m in rows
    ]
    return lines + md_table(head, table) + [""]
