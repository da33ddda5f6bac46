"""``make demo`` after the default set was rebuilt: its old row folders are moved aside, not
resumed (scripts/demo_rows.py, called by scripts/demo.sh)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "demo_rows.py"


def _rows_module():
    spec = importlib.util.spec_from_file_location("demo_rows", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(runs: Path, name: str, path: str, version: str) -> Path:
    row = runs / f"demo-{name}"
    row.mkdir(parents=True)
    manifest = {"dialogues": {"path": path, "set_version": version}}
    (row / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (row / "respond.jsonl").write_text("{}\n", encoding="utf-8")
    return row


def test_rows_of_another_set_are_renamed_and_nothing_is_deleted(tmp_path):
    runs, now = tmp_path / "runs", "/cache/sets/default-b3"
    _row(runs, "reference", "/cache/sets/default-b2", "default-b2")
    _row(runs, "neutral", now, "default-b3")  # this set: resumed, left alone
    (runs / "demo-shuffled").mkdir()  # no manifest yet: the run says what is wrong, if anything
    (runs / "demo-reference.default-b2").mkdir()  # the name is taken by an earlier move
    moved = _rows_module().move_other_sets(runs, ["reference", "neutral", "shuffled"], now)
    assert moved == [(runs / "demo-reference", runs / "demo-reference.default-b2.1")]
    assert (runs / "demo-reference.default-b2.1" / "respond.jsonl").is_file()
    assert not (runs / "demo-reference").exists()
    assert (runs / "demo-neutral" / "manifest.json").is_file()
    assert (runs / "demo-shuffled").is_dir()


def test_the_script_compares_with_the_default_set_of_this_machine(tmp_path):
    from stylebench.dialogues.sets import default_set_location

    runs = tmp_path / "runs"
    _row(runs, "reference", str(default_set_location()), "current")
    _row(runs, "neutral", str(tmp_path / "elsewhere"), "v1")
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", str(runs), "reference", "neutral", "shuffled"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.count("moved to") == 1 and "demo-neutral.v1" in out.stdout
    assert sorted(p.name for p in runs.iterdir()) == ["demo-neutral.v1", "demo-reference"]
