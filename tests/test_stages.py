"""The stages after respond, declared as data (stylebench/stages/registry.py)."""

from __future__ import annotations

import dataclasses

import pytest

from stylebench.config import make_config
from stylebench.records import FEATURES, JUDGEMENTS, RECORD_TYPES
from stylebench.stages import registry
from stylebench.stages.registry import RESPOND, STAGES, stage_spec, with_inputs
from stylebench.stages.runner import measure


def test_specs_name_record_types_and_read_only_earlier_stages():
    names = [s.name for s in STAGES]
    assert names == [
        "transcribe",
        "features",
        "probe",
        "caption",
        "caption_judge",
        "loudness",
        "judge",
    ]
    assert set(names) | {RESPOND} >= set(RECORD_TYPES)
    assert len(set(names)) == len(names)
    cfg = make_config()
    for i, spec in enumerate(STAGES):
        assert set(spec.input_names) <= {RESPOND, *names[:i]}, spec.name
        assert RECORD_TYPES.get(spec.name, spec.records.type) is spec.records.type, spec.name
        # a record names its stage: the default of its ``stage`` field is its kind's name
        stage_field = {f.name: f.default for f in dataclasses.fields(spec.records.type)}
        assert stage_field["stage"] == spec.name, spec.name
        assert hasattr(cfg, spec.section), spec.section
    assert with_inputs(["caption"]) == {"caption", "features", "transcribe"}
    with pytest.raises(KeyError, match="no stage 'captions'; the stages are transcribe"):
        stage_spec("captions")


def test_each_stage_class_declares_the_kind_its_spec_names():
    import importlib

    classes = {
        "transcribe": "stylebench.stages.transcribe:TranscribeStage",
        "features": "stylebench.stages.features:FeaturesStage",
        "probe": "stylebench.stages.probe:ProbeStage",
        "caption": "stylebench.stages.caption:CaptionStage",
        "caption_judge": "stylebench.stages.caption:CaptionJudgeStage",
        "loudness": "stylebench.stages.loudness:LoudnessStage",
        "judge": "stylebench.stages.judge:JudgeStage",
    }
    for spec in STAGES:
        module, name = classes[spec.name].split(":")
        cls = getattr(importlib.import_module(module), name)
        assert cls.records is spec.records and cls.name == spec.name, spec.name


def test_when_each_stage_runs():
    def running(**kw):
        cfg = make_config(**kw)
        return [s.name for s in STAGES if s.runs(cfg, [])]

    assert running() == ["transcribe", "features", "judge"]
    assert running(asr="none", judge="none") == ["features"]
    assert running(asr="none", judge="none", loudness=True) == ["features", "loudness"]
    assert running(captioner="features") == [
        "transcribe",
        "features",
        "caption",
        "caption_judge",
        "judge",
    ]
    # the probe runs only where there are emotion samples to probe
    assert "probe" not in running(emotion_probe="emotion2vec")


def test_the_runner_loops_over_the_specs_and_hands_on_declared_inputs(tmp_path, monkeypatch):
    from stylebench.store import RunStore

    seen: dict[str, dict] = {}

    class Nothing:
        records, name, errors, unit = FEATURES, "features", (), "sample"

        def plan(self):
            return []

        def compute(self, unit, done):
            return iter(())

    def build(ctx):
        seen["records"] = dict(ctx.records)
        with pytest.raises(KeyError):
            ctx.records["judge"]  # not declared: not handed on
        with pytest.raises(KeyError):
            ctx.records.of(JUDGEMENTS)
        return registry.Built(Nothing(), {"said": "hello"})

    spec = dataclasses.replace(stage_spec("features"), build=build)
    off = dataclasses.replace(stage_spec("transcribe"), runs=lambda cfg, samples: False)
    monkeypatch.setattr("stylebench.stages.runner.STAGES", (off, spec))
    replies = {("s", 1): object()}
    out = measure(RunStore(tmp_path), [], make_config(), replies, progress=False)
    assert seen["records"] == {RESPOND: replies, "transcribe": {}}
    assert out.records["features"] == {} and out.info == {"features": {"said": "hello"}}
    assert list(out.counts) == ["features"]  # transcribe did not run: no counts, no records
    assert out.records["transcribe"] == {}


def test_backend_options_are_the_section_fields_of_that_backend() -> None:
    """Each stage's backend options are fields of its own config section, prefixed like it, so
    `stylebench score --judge X` drops exactly the stored run's options of the old judge."""
    import dataclasses as dc

    from stylebench.config import SECTIONS

    for spec in STAGES:
        fields = {f.name for f in dc.fields(SECTIONS[spec.section])}
        for backend, options in spec.backend_options:
            assert backend in fields, (spec.name, backend)
            assert set(options) <= fields, (spec.name, set(options) - fields)
            stem = backend.removesuffix("er")  # captioner -> caption_*
            assert all(o.startswith(stem + "_") for o in options), (spec.name, options)
    names = {b for s in STAGES for b, _ in s.backend_options}
    assert names == {"judge", "captioner", "caption_judge"}
