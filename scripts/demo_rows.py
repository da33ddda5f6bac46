"""Move aside the demo's row folders that hold a run of another dialogue set.

The default set is rebuilt when its builder or its pools change, and a run refuses to mix two
sets; so before ``make demo`` resumes its rows, a row folder whose manifest names another set is
renamed ``runs/demo-ROW.SETVERSION`` (``.1``, ``.2``, ... when that name is taken). Nothing is
deleted; one line is printed per folder moved. A row with no manifest yet, or one the run itself
will refuse with its own message, is left as it is.

    python scripts/demo_rows.py [--runs runs] reference neutral shuffled
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def move_other_sets(runs: Path, rows: list[str], now: str) -> list[tuple[Path, Path]]:
    """Rename each ``runs/demo-ROW`` whose run is of a set other than ``now`` (its path);
    returns (old name, new name) per folder moved."""
    moved = []
    for m in rows:
        row = runs / f"demo-{m}"
        try:
            d = json.loads((row / "manifest.json").read_text(encoding="utf-8"))["dialogues"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if d.get("path") == now:
            continue
        version = d.get("set_version") or "old"
        new, k = row.with_name(f"{row.name}.{version}"), 1
        while new.exists():
            new, k = row.with_name(f"{row.name}.{version}.{k}"), k + 1
        row.rename(new)
        moved.append((row, new))
    return moved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--runs", type=Path, default=Path("runs"))
    args = ap.parse_args()
    from stylebench.dialogues.sets import default_set_location

    for old, new in move_other_sets(args.runs, args.rows, str(default_set_location())):
        print(f"  {old} was a run of another dialogue set: moved to {new}")


if __name__ == "__main__":
    main()
