"""Write tests/file_costs.json: each test file's seconds in a measured suite run.

``make test`` hands pytest-xdist the test files longest first (tests/conftest.py,
``pytest_collection_modifyitems``), so the last file a worker takes is a short one and the two
workers end together. The costs come from a JUnit XML report of a whole suite run::

    pytest -n auto --dist loadfile --junitxml=/tmp/suite.xml
    python scripts/test_costs.py /tmp/suite.xml

A file not in the table counts as 0 s (taken last); the order only changes when the suite ends,
never what it checks.
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "file_costs.json"


def file_costs(junit: Path) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown of its tests) in ``junit``."""
    costs: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("classname", "").split(".")
        path = "/".join(name[: name.index(next(n for n in name if n.startswith("test_"))) + 1])
        costs[f"{path}.py"] += float(case.get("time", 0.0))
    return {k: round(v, 1) for k, v in sorted(costs.items(), key=lambda kv: -kv[1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit", type=Path, help="pytest --junitxml report of a whole suite run")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    costs = file_costs(args.junit)
    args.out.write_text(json.dumps(costs, indent=0) + "\n", encoding="utf-8")
    print(f"{len(costs)} files, {sum(costs.values()):.0f} s in all -> {args.out}")


if __name__ == "__main__":
    main()
