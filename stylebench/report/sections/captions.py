"""Markdown of the report's ``captions`` block: caption-VSP per cell, the tie and cannot-tell
rates, agreement with the acoustic scores and with humans, and groundedness.

The block is built by :func:`stylebench.scoring.captions.caption_report_block`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.report.md_text import md_escape


def _f(x: Any, nd: int = 1) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _kappa(a: Mapping[str, Any] | None) -> str:
    if not a or not a.get("n"):
        return "no pairs to compare"
    kappa = "undefined (one label only)" if a["kappa"] is None else f"{a['kappa']:.2f}"
    return f"{a['percent']:.1f}% agreement, Cohen's kappa {kappa} (n={a['n']})"


def captions_markdown(block: Mapping[str, Any]) -> list[str]:
    d = block.get("describe") or {}
    who = (d.get("captioner") or {}).get("model", "")
    judge = (d.get("judge") or {}).get("model", "")
    lines = ["## Captioning probe: caption-based VSP", ""]
    if block.get("circular"):
        lines += [
            "**CIRCULAR**: the `features` captioner writes its captions from the same measurements as "
            "the acoustic VSP; agreement with it holds by construction.",
            "",
        ]
    caps = block["captions"]
    lines += [
        f"Captioner {md_escape(block['captioner'])} ({md_escape(str(who))}), caption judge "
        f"{md_escape(block['judge'])} ({md_escape(str(judge))}); captions ok {caps['n_ok']}/{caps['n_total']}. "
        "Caption-VSP = verdicts in the instructed direction / decided verdicts (increased, decreased, same); "
        "VSP all = over every ok verdict.",
        "",
        "| dim | direction | lang | pair | caption-VSP | 95% CI | VSP all | tie | cannot tell | unparseable | n ok/n |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in block["cells"]:
        ci = "–" if c["vsp_ci"] is None else f"{c['vsp_ci'][0]:.1f}–{c['vsp_ci'][1]:.1f}"
        lines.append(
            f"| {c['dim']} | {c['direction']} | {c['lang']} | {c['pair']} | {_f(c['vsp'])} | {ci} | "
            f"{_f(c['vsp_all'])} | {_pct(c['tie_rate'])} | {_pct(c['cannot_tell_rate'])} | "
            f"{_pct(c['unparseable_rate'])} | {c['n_ok']}/{c['n']} |"
        )
    lines.append("")
    for dim, a in (block.get("agreement_acoustic") or {}).items():
        lines.append(
            f"- Agreement with acoustic VSP ({md_escape(dim)}): direction {_kappa(a['direction'])}; valid {_kappa(a['valid'])}."
        )
    if block.get("agreement_human") is not None:
        lines.append(
            f"- Agreement with the human majority (emotion): {_kappa(block['agreement_human'])}."
        )
    for dim, g in (block.get("groundedness") or {}).items():
        lines.append(
            f"- Groundedness ({md_escape(dim)}, n={g['n']}): Spearman rho of caption level vs measured score "
            f"{_f(g['rho_value'], 2)}, vs change from turn 1 {_f(g['rho_change_vs_turn1'], 2)}."
        )
    lines.append("")
    return lines
