"""The "Timings" section: where each invocation's time went, per stage (provenance).

Shown only when the report dict carries a ``timings`` block, which ``stylebench report RUN
--timings`` adds to what it prints; the report files a run writes never carry one, so they stay
the same byte for byte from run to run (:mod:`stylebench.pipeline.timings`).
"""

from __future__ import annotations

from typing import Any

from stylebench.report.md_text import md_escape

HEAD = ("stage", "wall s", "compute s", "computed", "reused", "failed", "share of wall")
DASH = "—"


def _s(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}"


def _pct(x: float | None) -> str:
    return DASH if x is None else f"{100 * x:.1f}%"


def timings_markdown(block: dict[str, Any]) -> list[str]:
    """Markdown lines: one table per invocation, its stages and the harness overhead."""
    lines = [
        "## Timings",
        "",
        "Where each invocation's time went (provenance, never part of a score). compute = "
        "building a stage's backend and computing its units, or waiting for the workers that "
        "do; harness overhead = the wall time less every stage's compute time (planning, "
        "loading and appending records, the manifest, the dialogue set).",
        "",
    ]
    table = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    if not block.get("invocations"):
        note = block.get("note") or "no timings recorded"
        return [*lines, md_escape(note) + ".", "", *table, "| " + " | ".join([DASH] * 7) + " |", ""]
    target = block.get("overhead_target")
    for inv in block["invocations"]:
        wall = inv.get("wall_s")
        end = f"{wall:.2f} s wall" if wall is not None else "interrupted (no end recorded)"
        lines += [
            f"**{md_escape(inv['command'])}** {md_escape(inv['started_at'])} "
            f"(invocation {md_escape(inv['invocation'])}): {end}",
            "",
            *table,
        ]
        for st in inv["stages"]:
            cells = (
                md_escape(st["stage"]),
                _s(st["wall_s"]),
                _s(st["compute_s"]),
                str(st["computed"]),
                str(st["reused"]),
                str(st["failed"]),
                _pct(st.get("share")),
            )
            lines.append("| " + " | ".join(cells) + " |")
        over = _pct(inv.get("harness_share"))
        if target is not None and inv.get("harness_share") is not None:
            over += f" (target < {100 * target:g}%)"
        lines += [
            f"| harness overhead | {_s(inv.get('harness_s'))} | {DASH} | | | | {over} |",
            "",
        ]
    return lines
