"""Markdown of the report's ``emotion_scores`` block: which emotion scores are human, probe or
prosodic, how each agrees with the human majority, and the probe's own VSP table.

The block is built by :func:`stylebench.scoring.emotion.emotion_report_block`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.report.md_text import dim_table, md_escape


def _agree(a: Mapping[str, Any] | None) -> str:
    if not a or not a["n_pairs"]:
        return "no human majorities to compare with"
    kappa = "undefined" if a["kappa"] is None else f"{a['kappa']:.2f}"
    return (
        f"agreement with the human majority {a['percent']:.1f}% (Cohen's kappa {kappa}) "
        f"over {a['n_pairs']} pairs ({a['n_human_ties']} human ties left out)"
    )


def emotion_markdown(block: Mapping[str, Any]) -> list[str]:
    """The "Emotion scores" section: which scores are human, probe or prosodic."""
    p = block["prosodic"]
    lines = [
        "## Emotion scores: human, probe, prosodic",
        "",
        f"- The `emotion` table above is **prosodic** ({md_escape(p['label'])}; threshold "
        f"{p['threshold']} JND units).",
        f"- Prosodic: {_agree(p.get('agreement_with_human'))}.",
    ]
    probe = block.get("probe")
    if probe is None:
        lines.append(f"- **Probe**: {md_escape(block['sources']['probe'])}.")
    else:
        sat = probe["saturation"]
        share = "–" if sat["share"] is None else f"{100 * sat['share']:.1f}%"
        lines += [
            f"- **Probe** ({md_escape(probe['label'])}; threshold {probe['threshold']}): "
            f"saturation {share} of {sat['n_turns']} turns have a top probability above "
            f"{sat['threshold']}; {_agree(probe.get('agreement_with_human'))}.",
        ]
    lines.append(f"- **Human**: {md_escape(block['sources']['human'])}.")
    lines.append("")
    if probe is not None and probe["cells"]:
        table = dim_table("emotion", probe["cells"])
        lines += ["### Probe VSP (probability of the target emotion)", *table[1:]]
    return lines
