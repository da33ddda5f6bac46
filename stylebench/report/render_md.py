"""The Markdown renderer: title, run facts, one table per dim, then the optional sections.

Outside text goes through :func:`stylebench.report.md_text.md_escape` (a Markdown escape, not an
HTML one), so a terminal shows "F0 > 0" as written and a model name cannot break a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.metrics.dims.base import in_order
from stylebench.report.md_text import dim_table, md_escape
from stylebench.report.sections import SECTIONS, Section, in_place
from stylebench.report.sections.relevance import banner_markdown


def to_markdown(report: dict[str, Any], sections: Sequence[Section] = SECTIONS) -> str:
    """Markdown: title, thresholds and extractors line, one table per dim, sections, notes.

    ``sections`` are the optional sections to show, in the order of their places: the report's
    own (:data:`~stylebench.report.sections.SECTIONS`, the default) and the run's stages'
    (``stylebench.stages.registry.report_sections``)."""
    th = report["thresholds"]
    lines = [
        f"# stylebench: {md_escape(report['model'])} (run {md_escape(report['run_id'])})",
        "",
        *banner_markdown(report),  # the not-eligible banner, if any
        "Thresholds: "
        + ", ".join(
            f"{d.name} {th[d.threshold_field]}{'' if d.unit == '%' else ' '}{d.unit}"
            for d in in_order()
            if d.threshold_field in th and (d.paper or d.name in report["dims"])
        )
        + ". Extractors: "
        + (
            "; ".join(f"{md_escape(k)}: {md_escape(v)}" for k, v in report["extractors"].items())
            or "none recorded"
        )
        + ".",
        "",
        f"Samples: {report['n_samples']}; turns ok: {report['n_turns_ok']}/"
        f"{report['n_turns_total']}. VSP = valid/ok samples; SVD over valid samples; "
        "signed change = mean over ok samples.",
        "",
    ]
    if report.get("plot"):  # set only when the trajectory plot is missing, with the reason
        lines += [md_escape(report["plot"]), ""]
    mark = "✗ " if report.get("eligible") is False else ""  # the gate: marked, never dropped
    dims = list(report.get("dims") or [])
    dims += sorted({c["dim"] for c in report["cells"]} - set(dims), key=str)
    for dim in dims:
        cells = [c for c in report["cells"] if c["dim"] == dim]
        if cells:
            lines += dim_table(dim, cells, mark)
    for section in in_place(sections):  # the optional sections, in order
        lines += section.markdown(report)
    return "\n".join(lines)
