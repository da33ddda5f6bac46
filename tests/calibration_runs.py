"""The calibration comparison that tests/test_compare.py and tests/test_pages_chromium.py read.

One real neutral run on the small set (every acoustic dim, English, 1 sample per cell, no ASR,
the offline judge on the text channel) with markup in one reply (its volume sample, turn 1), its
report written again with that reply; ``compare`` runs reference and shuffled beside it with the
same settings (3 runs) and writes the comparison into ``cmp/``. Built once per test session by the
``calibration_comparison`` fixture (tests/conftest.py) and read-only: a test that compares again
or resumes a run copies the folder first.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"
#: what compare_command returned when it built the folder (not a file compare writes)
RETURNED = "returned.json"


def build_comparison(out: Path, small_set: Path) -> None:
    """Write the three runs and their comparison (module docstring) into the new folder ``out``."""
    from stylebench.commands.runs import report_only
    from stylebench.commands.runs import run as run_pipeline
    from stylebench.compare.command import compare_command
    from stylebench.config import make_config
    from stylebench.ratings.export import run_replies

    cfg = make_config(
        model="neutral",
        dim="all",
        lang="en",
        limit=1,
        asr="none",
        vad="energy",
        judge="offline",
        n_boot=50,
        dialogues=str(small_set),
        out=str(out),
    )
    store = run_pipeline(cfg, progress=False).store
    first = min(
        (r for r in run_replies(store)[1].values() if "volume" in r.sample_id),
        key=lambda r: (r.sample_id, r.turn),
    )
    store.append("respond", dataclasses.replace(first, text=XSS + " " + first.text))
    report_only(store.root)  # the run's page again, with the markup in its reply
    result, md, folder = compare_command([store.root], out=out / "cmp", n_boot=50)
    returned = {
        "neutral": store.root.name,
        "result": result,
        # whether the result survives JSON as it is (no tuple, no NaN): tests compare it with
        # compare.json, which the stored copy alone could not tell
        "result_is_json": json.loads(json.dumps(result)) == result,
        "md": md,
        "folder": folder.name,
    }
    (out / RETURNED).write_text(json.dumps(returned), encoding="utf-8")


def load_comparison(out: Path) -> dict[str, Any]:
    """The built folder as the tests read it: ``out`` (the folder of the three runs),
    ``neutral`` (its run folder), ``result`` and ``md`` (as compare returned them),
    ``result_is_json`` (the returned result equals its JSON form) and ``folder`` (the
    comparison's files)."""
    returned = json.loads((out / RETURNED).read_text(encoding="utf-8"))
    return {
        "out": out,
        "neutral": out / returned["neutral"],
        "result": returned["result"],
        "result_is_json": returned["result_is_json"],
        "md": returned["md"],
        "folder": out / returned["folder"],
    }
