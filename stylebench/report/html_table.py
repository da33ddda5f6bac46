"""HTML pieces shared by every page that shows tables (the comparison page and the stages'
tables on it): a sortable table and a number with its CI.

All text goes through :func:`html.escape`; table ids are given by code, never made from text.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

#: how a page shows a relevance gate's verdict
ELIGIBLE_TEXT = {True: "yes", False: "no", None: "unknown"}


def _v(value: Any) -> str:
    return "" if value is None else escape(str(value), quote=True)


def html_num(x: float | None, ci: Sequence[float] | None = None, nd: int = 1) -> str:
    """``12.3 [10.0, 14.5]`` (``nd`` decimals), ``–`` for a missing value."""
    if x is None:
        return "–"
    return f"{x:.{nd}f}" + (f" [{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]" if ci else "")


def table(table_id: str, head: Sequence[str], rows: Sequence[Sequence[tuple]]) -> str:
    """A sortable table; each cell is ``(text, sort value)`` or ``(text, sort value, link)``."""
    out = [f'<table class="sortable" id="{escape(table_id)}"><thead><tr>']
    out += [f"<th>{escape(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for cell in row:
            text = escape(str(cell[0]))
            if len(cell) > 2:
                text = f'<a href="{escape(cell[2])}">{text}</a>'
            out.append(f'<td data-v="{_v(cell[1])}">{text}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)
