"""The CSV renderer: one row per cell; quoting is the :mod:`csv` module's, nothing else."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from stylebench.scoring.cells import CELL_STYLE, CSV_COLUMNS

COLUMNS = CSV_COLUMNS


def to_csv(report: dict[str, Any]) -> str:
    """One row per cell with a header; CIs split into low/high columns, errors as JSON."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for c in report["cells"]:
        row = {k: c.get(k) for k in COLUMNS if k in c}
        for name in (k for k in CELL_STYLE if k.endswith("_ci")):
            ci = c[name]
            row[f"{name}_low"], row[f"{name}_high"] = ci if ci is not None else (None, None)
        row.update(
            model=report["model"],
            run_id=report["run_id"],
            errors=json.dumps(c["errors"], ensure_ascii=False, sort_keys=True),
            eligible={True: "true", False: "false"}.get(report.get("eligible"), ""),
        )
        w.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()
