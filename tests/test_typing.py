"""The classes built from the dimension registry and what a type checker reads for them agree.

``Thresholds`` and ``ScoreConfig`` are made with ``dataclasses.make_dataclass`` from the registry
(an extension dimension adds its own field); a type checker cannot read that, so each module
declares the built-in fields under ``if TYPE_CHECKING:``. These tests fail when the two drift.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from stylebench.metrics.dims.base import in_order

ROOT = Path(__file__).resolve().parents[1]


def _declared(path: Path, name: str) -> tuple[list[str], list[str]]:
    """(property names, keyword-only __init__ parameters) of the TYPE_CHECKING class ``name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for cls in node.body:
                if isinstance(cls, ast.ClassDef) and cls.name == name:
                    props = [
                        f.name
                        for f in cls.body
                        if isinstance(f, ast.FunctionDef)
                        and any(ast.unparse(d) == "property" for d in f.decorator_list)
                    ]
                    init = next(
                        f
                        for f in cls.body
                        if isinstance(f, ast.FunctionDef) and f.name == "__init__"
                    )
                    return props, [a.arg for a in init.args.kwonlyargs]
    raise AssertionError(f"{path}: no `if TYPE_CHECKING: class {name}`")


@pytest.mark.parametrize(
    ("module", "name", "extra"),
    [
        ("stylebench/scoring/cells.py", "Thresholds", []),
        ("stylebench/config.py", "ScoreConfig", ["n_boot", "min_quality"]),
    ],
)
def test_declared_fields_match_the_built_class(module: str, name: str, extra: list[str]) -> None:
    import importlib

    mod = importlib.import_module(module.removesuffix(".py").replace("/", "."))
    built = [f.name for f in dataclasses.fields(getattr(mod, name))]
    props, params = _declared(ROOT / module, name)
    # the paper's dimensions are declared; an extension's field is named only in its own module
    # (tests/test_dims.py), so the checker reads it through __getattr__ / **extensions
    paper = [d.threshold_field for d in in_order() if d.paper]
    assert set(paper) <= set(built) and set(extra) <= set(built)
    assert sorted(props) == sorted(paper + extra), f"{name}: declared properties drifted"
    assert sorted(params) == sorted(paper + extra), f"{name}: declared __init__ drifted"


def test_thresholds_defaults_and_for_dim_come_from_the_registry() -> None:
    from stylebench.scoring.cells import Thresholds

    th = Thresholds()
    for d in in_order():
        assert th.for_dim(d.name) == d.default_threshold
    assert inspect.isclass(Thresholds) and dataclasses.is_dataclass(Thresholds)
    with pytest.raises(dataclasses.FrozenInstanceError):
        th.pitch_st = 2.0  # type: ignore[misc]
