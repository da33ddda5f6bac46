"""The comparison's files: compare.json (everything), leaderboard.json / .csv (one row per model
and cell, each with its provenance), compare.md (printed) and compare.html.

Every file is written to a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.atomic import write_text
from stylebench.ratings.page import safe_cell
from stylebench.scoring.cells import COMPARE_COLUMNS

PROVENANCE = (
    "run_id",
    "model_fingerprint",
    "dialogue_checksum",
    "asr",
    "asr_cpu",
    "judge",
    "thresholds",
    "stylebench_version",
    "git",
    "manifest_sha256",
    "run_dir",
)
CELL_COLUMNS = COMPARE_COLUMNS
COLUMNS = (
    "model",
    "calibration",
    "eligible",
    "carried_forward",
    "srd",
    "mrd",
    *CELL_COLUMNS,
    *PROVENANCE,
)
#: the style numbers of a cell, left empty for a model not carried forward (not eligible)
STYLE_COLUMNS = ("vsp", "vsp_ci", "vsp_direction", "vsp_direction_ci", "svd", "svd_ci")


def leaderboard_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (model, cell): the cell's VSP/SVD and the model's provenance; a model that
    failed the relevance gate has ``carried_forward`` False and no VSP/SVD (compare.json's
    cells keep them, for inspection)."""
    models = {s["model"]: s for s in result["leaderboard"]}
    rows = []
    for block in result["cells"]:
        for label, cell in block["models"].items():
            s = models[label]
            row = {
                "model": label,
                "calibration": s["calibration"],
                "eligible": s["eligible"],
                "carried_forward": s["carried_forward"],
                "srd": s["srd"],
                "mrd": s["mrd"],
            }
            row.update({k: block[k] for k in ("dim", "direction", "lang", "pair", "group")})
            row.update({k: (cell or {}).get(k) for k in CELL_COLUMNS[5:]})
            if not s["carried_forward"]:
                row.update(dict.fromkeys(STYLE_COLUMNS))
            row.update({k: s["provenance"].get(k) for k in PROVENANCE})
            rows.append(row)
    return rows


def leaderboard_json(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": result["format"],
        "models": result["leaderboard"],
        "rows": leaderboard_rows(result),
    }


def leaderboard_csv(result: dict[str, Any]) -> str:
    """The rows as CSV; lists and dicts as JSON; formula-looking text made inert."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in leaderboard_rows(result):
        w.writerow(
            {
                k: safe_cell(json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v)
                for k, v in row.items()
            }
        )
    return buf.getvalue()


def _write(path: Path, text: str) -> None:
    write_text(path, text)


def write_files(out: Path, result: dict[str, Any], md: str, html: str | None) -> list[Path]:
    """Write the comparison into ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    files: list[tuple[str, str]] = [
        ("compare.json", json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)),
        (
            "leaderboard.json",
            json.dumps(leaderboard_json(result), indent=2, sort_keys=True, ensure_ascii=False),
        ),
        ("leaderboard.csv", leaderboard_csv(result)),
        ("compare.md", md),
    ]
    if html is not None:
        files.append(("compare.html", html))
    for name, text in files:
        _write(out / name, text)
    return [out / name for name, _ in files]


def fmt_ci(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{ci[0]:g}, {ci[1]:g}]"
