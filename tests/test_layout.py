"""The package layout: every folder with an __init__.py is installed, and no module is too long."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_declared_in_pyproject():
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = set()
    for name, folder in cfg["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            found.add(".".join((name, *rel.parts)))
    # data folders (no __init__.py) are declared as packages too, each with its package-data,
    # so setuptools installs them without warning that it would ignore them
    data = {name for name in cfg["packages"] if name in cfg.get("package-data", {})}
    assert set(cfg["packages"]) - data == found
    for name in data:
        first, *rest = name.split(".")
        base = next(
            (k for k in sorted(cfg["package-dir"], key=len, reverse=True) if name.startswith(k)),
            first,
        )
        folder = REPO / cfg["package-dir"][base] / Path(*name[len(base) + 1 :].split("."))
        assert folder.is_dir() and any(folder.iterdir()), name
