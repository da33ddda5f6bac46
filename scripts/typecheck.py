"""Run mypy on the packages whose types `make test` holds (``[tool.stylebench-typecheck]``).

The installed package maps ``stylebench.metrics``, ``stylebench.synth``, ... onto top-level folders
(``package-dir`` in pyproject.toml), which a type checker cannot follow through an editable
install. So this builds a view of the package as it is installed: a folder ``stylebench/`` of
symbolic links to the source, with ``metrics/``, ``synth/``, ``model_wrappers/`` and
``dialogues/`` linked in, and runs mypy there. Paths in mypy's messages are package paths
(``stylebench/metrics/dims/speed.py`` is ``metrics/dims/speed.py``).

    python scripts/typecheck.py            # what `make test` runs; exit status is mypy's
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_view(into: Path) -> Path:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = cfg["tool"]["setuptools"]["package-dir"]
    pkg = into / "stylebench"
    pkg.mkdir()
    for entry in sorted((ROOT / "stylebench").iterdir()):
        if entry.name != "__pycache__":
            os.symlink(entry, pkg / entry.name)
    for name, folder in sorted(package_dir.items()):
        if name != "stylebench":
            os.symlink(ROOT / folder, into / name.replace(".", "/"))
    return into


def main() -> int:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    targets: list[str] = cfg["tool"]["stylebench-typecheck"]["packages"]
    with tempfile.TemporaryDirectory(prefix="stylebench-typecheck-") as tmp:
        view = build_view(Path(tmp))
        cmd = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *targets,
        ]
        return subprocess.call(cmd, cwd=view)


if __name__ == "__main__":
    raise SystemExit(main())
