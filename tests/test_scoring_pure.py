"""``stylebench/scoring/`` is pure: it is handed records and settings and reads nothing itself."""

from __future__ import annotations

import ast
from pathlib import Path

import stylebench.scoring

FORBIDDEN = (
    "stylebench.store",
    "stylebench.ratings",
    "stylebench.report",
    "stylebench.pipeline",
    "stylebench.stages",
    "stylebench.commands",
    "stylebench.compare",
    "stylebench.cli",
)


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_scoring_imports_no_store_ratings_report_or_pipeline():
    folder = Path(stylebench.scoring.__file__).parent
    files = sorted(folder.glob("*.py"))
    assert len(files) >= 8
    bad = {
        f"{p.name}: {m}"
        for p in files
        for m in _imports(p)
        if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)
    }
    assert not bad, sorted(bad)


def test_scoring_opens_no_file():
    folder = Path(stylebench.scoring.__file__).parent
    for p in folder.glob("*.py"):
        text = p.read_text(encoding="utf-8")
        for call in ("read_text(", "open(", "read_bytes(", "json.load"):
            assert call not in text, (p.name, call)
