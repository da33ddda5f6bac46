"""Flat rows written as an aligned text table, CSV or JSON (``stylebench measure`` and ``pairs``).

The rows are the ones the Python API turns into DataFrames (:mod:`stylebench.api`); CSV and JSON
hold every column at full precision, the text table a chosen few, rounded, for reading.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from stylebench.cli.common import option
from stylebench.errors import BadValue

ROW_FORMATS = ("table", "csv", "json")
#: a text table column: its header and how a row shows in it
Column = tuple[str, Callable[[Mapping[str, Any]], str]]


def row_format_option() -> click.Option:
    return option(
        "--format",
        type=click.Choice(ROW_FORMATS),
        default=None,
        help="output format (default: from --out's suffix, .csv or .json, else table)",
    )


def out_option(help: str = "write to this file instead of the terminal") -> click.Option:
    return option("--out", default=None, metavar="FILE", help=help)


def chosen_format(fmt: str | None, out: str | None) -> str:
    """``--format``, else the format ``--out``'s suffix names, else ``table``."""
    if fmt:
        return fmt
    suffix = Path(out).suffix.lower().lstrip(".") if out else ""
    return suffix if suffix in ("csv", "json") else "table"


def num(x: Any, nd: int = 1) -> str:
    """A number rounded for the table; ``-`` for a missing one."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{nd}f}"


def text_table(columns: Sequence[Column], rows: Sequence[Mapping[str, Any]]) -> str:
    """An aligned plain-text table: numbers right-aligned, text left-aligned."""
    cells = [[show(r) for _, show in columns] for r in rows]
    heads = [h for h, _ in columns]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(heads)]

    def numeric(i: int) -> bool:
        vals = [c[i] for c in cells if c[i] != "-"]
        return bool(vals) and all(_is_number(v.split(" ")[0]) for v in vals)

    right = [numeric(i) for i in range(len(heads))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)
        ).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(heads), sep, *(line(c) for c in cells)]) + "\n"


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("%").split("/")[0])
    except ValueError:
        return False
    return True


def _csv_value(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return " | ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return v


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """The rows as CSV (a header row; lists joined by `` | ``, dicts as JSON, ``None`` empty)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_csv_value(r.get(c)) for c in columns])
    return buf.getvalue()


def json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def emit(text: str, out: str | None, what: str) -> None:
    """Write ``text`` to ``out`` (saying so on stderr), or to stdout."""
    if out is None:
        sys.stdout.write(text)
        return
    p = Path(out)
    if p.is_dir():
        raise BadValue(f"--out {out} is a folder; name a file")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadValue(f"--out {out}: cannot write it ({exc.strerror or exc})") from None
    print(f"stylebench: {what} written to {p}", file=sys.stderr)


def counts_line(counts: Mapping[str, int]) -> str:
    """``reason: n; reason: n`` (most frequent first)."""
    return "; ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
