"""The declared transformers floor is the one ``make test-floor`` tests (never declare untested).

``make test-floor`` runs tests/test_wrappers_hf.py (the tiny random Qwen2.5-Omni and Qwen3-Omni
three-turn runs) in a venv holding ``FLOOR_TRANSFORMERS``; this test fails when pyproject's
``qwen-omni`` extra, the wrappers' ``min_transformers`` or the Makefile drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

from stylebench.model_wrappers.hf.qwen3_omni import SPEC as QWEN3
from stylebench.model_wrappers.hf.qwen25_omni import SPEC as QWEN25

ROOT = Path(__file__).resolve().parents[1]


def test_declared_floor_is_the_tested_one():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    (tested,) = re.findall(r"^FLOOR_TRANSFORMERS \?= (\S+)$", make, flags=re.M)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (line,) = re.findall(r"^qwen-omni = \[(.*)\]$", pyproject, flags=re.M)
    assert f'"transformers>={tested}"' in line
    assert QWEN25.min_transformers == QWEN3.min_transformers == tested
    assert "floor-check" in make and "tests/test_wrappers_hf.py" in make
