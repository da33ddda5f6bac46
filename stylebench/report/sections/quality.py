"""The "Speech quality" section: DNSMOS SIG/BAK/OVRL per turn, and the change from turn 1.

Reads the ``quality`` block :func:`stylebench.stages.features.quality_report_part` put into
the report (:func:`stylebench.scoring.quality.quality_block`); shared with ``stylebench compare``
(:func:`quality_rows`, :func:`change_cell`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.report.md_text import fmt_ci, md_escape, md_table

TURN_HEAD = ("group", "turn", "SIG", "BAK", "OVRL", "n ok / n")
CHANGE_HEAD = ("group", "turns", "Δ SIG [CI]", "Δ BAK [CI]", "Δ OVRL [CI]", "n paired")


def change_cell(row: Mapping[str, Any], name: str) -> str:
    """``-0.12 [-0.30, 0.05]``: a change row's mean change of score ``name`` and its CI."""
    return fmt_ci(row.get(f"d_{name}"), row.get(f"d_{name}_ci"), 2)


def quality_rows(
    block: Mapping[str, Any], key: str = "group"
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The section's two tables' rows (text escaped): per turn, and the changes from turn 1;
    the first column is each row's ``key`` (a report's group, a comparison's model)."""
    turns = [
        (
            md_escape(r[key]),
            str(r["turn"]),
            fmt_ci(r["sig"], None, 2),
            fmt_ci(r["bak"], None, 2),
            fmt_ci(r["ovrl"], None, 2),
            f"{r['n_ok']}/{r['n']}",
        )
        for r in block.get("turns") or []
    ]
    changes = [
        (
            md_escape(r[key]),
            md_escape(r["pair"]),
            change_cell(r, "sig"),
            change_cell(r, "bak"),
            change_cell(r, "ovrl"),
            str(r["n"]),
        )
        for r in block.get("changes") or []
    ]
    return turns, changes


def quality_markdown(block: Mapping[str, Any]) -> list[str]:
    """Markdown lines of the section (a note alone when nothing was measured)."""
    lines = ["## Speech quality (DNSMOS)", ""]
    if block.get("note"):
        return [*lines, md_escape(block["note"]) + ".", ""]
    gate = block.get("min_quality")
    lines += [
        md_escape(block.get("measure", "DNSMOS P.835"))
        + ". "
        + (
            f"--min-quality {gate:g}: replies under OVRL {gate:g} are unscored (low_quality)."
            if gate is not None
            else "Never a gate here (--min-quality is off)."
        ),
        "",
        *md_table(TURN_HEAD, quality_rows(block)[0]),
        "",
        f"Change from turn 1 (the neutral reply) to each styled turn, mean over samples with both "
        f"turns measured, {100 * block.get('ci', 0.95):g}% bootstrap CI; negative: the styled "
        "reply scores lower.",
        "",
        *md_table(CHANGE_HEAD, quality_rows(block)[1]),
        "",
    ]
    return lines
