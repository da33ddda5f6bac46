"""The report's notes: one bullet each (what a reader should know about this run's numbers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.report.md_text import md_escape


def notes_markdown(report: Mapping[str, Any]) -> list[str]:
    if not report.get("notes"):
        return []
    return ["## Notes", "", *(f"- {md_escape(n)}" for n in report["notes"]), ""]
