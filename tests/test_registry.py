from __future__ import annotations

import subprocess
import sys

import pytest

from stylebench.registry import LazyRegistry


def test_unknown_name_suggests_close_match():
    reg = LazyRegistry("model", {"reference": "x:y", "neutral": "x:z"})
    with pytest.raises(KeyError, match="did you mean reference"):
        reg["refrence"]


def test_duplicate_name_fails():
    with pytest.raises(ValueError, match="duplicate"):
        LazyRegistry.from_pairs("model", [("a", "m:A"), ("a", "m:B")])


def test_models_registry_loads_lazily():
    from stylebench.model_wrappers.registry import MODELS

    assert {"reference", "neutral"} <= set(MODELS)
    assert MODELS.load("reference").name == "reference"


def test_import_stylebench_is_light():
    code = (
        "import sys, stylebench, stylebench.cli, stylebench.pipeline, stylebench.model_wrappers.registry;"
        "heavy = [m for m in ('torch', 'faster_whisper', 'pyworld', 'parselmouth', 'matplotlib', 'scipy')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
