"""The "Unscored" section: why samples have no score, per dimension (counts over the cells).

Every cell counts a sample whose pair could not be scored under the reason of its first failing
turn; a doubtful measurement (too short, not speech, doubtful transcript, disagreeing F0
trackers: docs/metrics.md) is such a reason, like a model error. Each (sample, pair) is counted
once per cell it belongs to.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from stylebench.report.md_text import md_escape


def unscored_markdown(report: dict[str, Any]) -> list[str]:
    """Markdown lines, or none when every pair of every cell was scored."""
    by_dim: dict[str, Counter[str]] = {}
    for c in report["cells"]:
        for reason, n in (c.get("errors") or {}).items():
            by_dim.setdefault(c["dim"], Counter())[reason] += n
    if not by_dim:
        return []
    lines = [
        "## Unscored",
        "",
        "Sample pairs without a score, by reason (counted in n, not in n_ok; never as 0).",
        "",
        "| dim | reason | sample pairs |",
        "|---|---|---|",
    ]
    for dim in sorted(by_dim):
        for reason, n in sorted(by_dim[dim].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"| {md_escape(dim)} | {md_escape(reason)} | {n} |")
    return [*lines, ""]
