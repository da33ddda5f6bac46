"""The order the suite hands its files to pytest-xdist (tests/conftest.py): longest first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from conftest import longest_files_first

TESTS = Path(__file__).resolve().parent


def test_files_go_longest_first_and_keep_their_tests_in_order():
    ids = ["tests/a.py::x", "tests/b.py::y", "tests/a.py::z", "tests/c.py::w", "tests/d.py::v"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    longest_files_first(items, {"tests/b.py": 30.0, "tests/c.py": 90.0})
    assert [i.nodeid for i in items] == [
        "tests/c.py::w",
        "tests/b.py::y",
        "tests/a.py::x",  # not listed: 0 s, in the order they came
        "tests/a.py::z",
        "tests/d.py::v",
    ]


def test_the_costs_file_names_test_files_with_seconds():
    costs = json.loads((TESTS / "file_costs.json").read_text(encoding="utf-8"))
    assert len(costs) > 50 and all(isinstance(v, (int, float)) and v >= 0 for v in costs.values())
    present = {f"tests/{p.name}" for p in TESTS.glob("test_*.py")}
    assert sum(name in present for name in costs) >= 0.9 * len(costs)


def test_the_costs_script_reads_a_junit_report(tmp_path):
    report = tmp_path / "suite.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="t1" time="2.5"/>'
        '<testcase classname="tests.test_a.TestGroup" name="t2" time="1.0"/>'
        '<testcase classname="tests.test_b" name="t3" time="9.0"/>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    out = tmp_path / "costs.json"
    script = TESTS.parent / "scripts" / "test_costs.py"
    subprocess.run([sys.executable, str(script), str(report), "--out", str(out)], check=True)
    assert json.loads(out.read_text(encoding="utf-8")) == {
        "tests/test_b.py": 9.0,
        "tests/test_a.py": 3.5,
    }
