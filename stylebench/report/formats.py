"""The report formats by name: each renderer does its own escaping (JSON, Markdown, CSV)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stylebench.report.render_csv import to_csv
from stylebench.report.render_json import to_json
from stylebench.report.render_md import to_markdown
from stylebench.report.sections import SECTIONS, Section

#: format name -> renderer of the report dict
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "json": to_json,
    "md": to_markdown,
    "csv": to_csv,
}
#: the file each format is written to in a run folder
FILE_NAMES = {"json": "report.json", "md": "report.md", "csv": "report.csv"}


def render(report: dict[str, Any], fmt: str, *, sections: Sequence[Section] = SECTIONS) -> str:
    """The report as text in ``fmt`` (``json``, ``md`` or ``csv``); ``sections`` are the
    Markdown's optional sections (the report's own and the stages', see
    ``stylebench.stages.registry.report_sections``).

    Raises:
        ValueError: an unknown format.
    """
    if fmt not in RENDERERS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {sorted(RENDERERS)}")
    if fmt == "md":
        return to_markdown(report, sections)
    return RENDERERS[fmt](report)
