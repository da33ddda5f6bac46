"""Markdown building blocks of the reports: the Markdown escape, tables, and number formats.

Only Markdown output uses :func:`md_escape`. The JSON renderer escapes through :mod:`json`, the CSV
renderer through :mod:`csv`; HTML entities never appear in a Markdown report, because a terminal
shows them verbatim ("F0 &gt; 0").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.metrics.dims.base import dimension

# Characters that are Markdown syntax wherever they stand (backslash first: it is the escape).
_ALWAYS = re.compile(r"[\\`*|\[\]~]")
# "<" only where it would open an HTML tag, comment, declaration or autolink; "F0 < 1" stays.
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
# "&" only where it would form a character reference ("&gt;", "&#62;").
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
# "_" only where it can open or close emphasis; inside a word (f0_mean_guarded) it cannot.
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# Block markers at the start of the text: it often follows "- " (a list item) in a report.
_BLOCK_START = re.compile(r"^(?:#|>|[-+](?=\s|$|[-+]))")
_ORDERED_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


def md_escape(text: Any) -> str:
    """Make outside text (model names, notes, error reasons) literal in Markdown.

    Line breaks become spaces and the ends are trimmed, so the text stays on its line and inside
    its table cell. Backslash, pipe, backtick, asterisk, brackets and tilde are backslash-escaped
    everywhere; ``_`` where it could delimit emphasis; ``<`` only where it would start an HTML tag;
    ``&`` only where it would start a character reference; a leading block marker (``#``, ``>``,
    ``-``, ``+``, ``1.``) so that text after "- " cannot start a heading, quote or nested list.
    Everything else, such as "F0 > 0", is left as written.
    """
    s = " ".join(str(text).splitlines()).strip()
    s = _ALWAYS.sub(lambda m: "\\" + m.group(0), s)
    s = _TAG_OPEN.sub(r"\\<", s)
    s = _ENTITY.sub(r"\\&", s)
    s = _UNDERSCORE.sub(r"\\_", s)
    s = _BLOCK_START.sub(lambda m: "\\" + m.group(0), s)
    return _ORDERED_START.sub(r"\1\\\2", s)


def md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A pipe table; the caller escapes outside text in ``rows`` (headers are ours)."""
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]


def fmt_ci(x: float | None, ci: Sequence[float] | None, nd: int = 1) -> str:
    """``x [low, high]`` with ``nd`` decimals; "–" when there is no value."""
    if x is None:
        return "–"
    return f"{x:.{nd}f}" + (f" [{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]" if ci is not None else "")


def eligible_md(eligible: bool | None) -> str:
    """A relevance gate's verdict in Markdown: ``yes``, ``**no**`` or ``unknown``."""
    return {True: "yes", False: "**no**", None: "unknown"}[eligible]


def _vsp_all(c: Mapping[str, Any]) -> str:
    """VSP over all samples (failed = not valid), shown only when some samples failed."""
    return "" if c["n_ok"] == c["n"] or c["vsp_all"] is None else f"; all {c['vsp_all']:.1f}"


def _signed(c: Mapping[str, Any]) -> str:
    if c["svd_signed"] is None:
        return "–"
    if dimension(c["dim"]).change_is_relative:  # the relative and perceptual changes coincide
        return f"{c['change_mean']:+.2f} {dimension(c['dim']).unit}"
    return f"{c['svd_signed']:+.1f}% ({c['change_mean']:+.2f} {dimension(c['dim']).unit})"


def dim_table(dim: str, cells: Sequence[Mapping[str, Any]], mark: str = "") -> list[str]:
    """One dim's section: heading, a row per cell (JSON form), then the failed samples' reasons.

    ``mark`` prefixes every VSP and SVD figure (the relevance gate's "✗ " for a model that is
    not eligible: its cells are marked, never dropped).
    """
    grouped = any(c["group"] for c in cells)
    head = ["direction", "lang", "pair"] + (["group"] if grouped else [])
    head += [
        "VSP % [95% CI]",
        "direction-only % [95% CI]",
        f"SVD {dimension(dim).words['svd']} [95% CI]",
        "signed change",
        "n_ok/n",
        "flagged",
    ]
    rows, errs = [], []
    for c in cells:
        key = [c["direction"], c["lang"], c["pair"]] + ([c["group"]] if grouped else [])
        rows.append(
            [md_escape(k) for k in key]
            + [
                mark + fmt_ci(c["vsp"], c["vsp_ci"]) + _vsp_all(c),
                mark + fmt_ci(c.get("vsp_direction"), c.get("vsp_direction_ci")),
                mark + fmt_ci(c["svd"], c["svd_ci"], 2),
                _signed(c),
                f"{c['n_ok']}/{c['n']}",
                str(c["n_flagged"]),
            ]
        )
        if c["errors"]:
            what = ", ".join(f"{md_escape(r)} ({k})" for r, k in c["errors"].items())
            errs.append(f"- {' / '.join(md_escape(k) for k in key)}: {what}")
    lines = [f"## {md_escape(dim)}", "", *md_table(head, rows)]
    if errs:
        lines += ["", "Errors (failed samples; counted as not valid in 'all'):", *errs]
    return lines + [""]
