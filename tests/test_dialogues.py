from __future__ import annotations

import json

import pytest

from stylebench.dialogues.builder import BuildSpec, plan_samples
from stylebench.dialogues.sets import load_set
from stylebench.synth.espeak import voices_for


def test_small_set_is_complete(small_set):
    samples, checksum = load_set(small_set)
    assert len(samples) == 3 * 2 * 2 * 2
    card = json.loads((small_set / "set_card.json").read_text())
    assert card["checksum"] == checksum and card["n_samples"] == len(samples)
    assert all(c["n"] == 2 for c in card["cells"])
    assert len({s.voice for s in samples if s.lang == "en"}) == 2
    for s in samples:
        assert s.turns[0].text != s.turns[1].text != s.turns[2].text
        assert all((small_set / t.audio).stat().st_size > 1000 for t in s.turns)


def test_plan_is_deterministic_and_single_dimension():
    spec = BuildSpec(per_cell=5, seed=3)
    voices = {lang: voices_for(lang) for lang in spec.langs}
    a, b = plan_samples(spec, voices), plan_samples(spec, voices)
    assert a == b
    assert len(a) == 3 * 2 * 2 * 5
    assert len({p["id"] for p in a}) == len(a)


def test_existing_set_is_never_overwritten(small_set):
    from stylebench.dialogues.builder import build_set
    from stylebench.synth.espeak import EspeakSynth

    with pytest.raises(FileExistsError):
        build_set(small_set, BuildSpec(per_cell=1), EspeakSynth(), {})


def test_not_a_set(tmp_path):
    with pytest.raises(FileNotFoundError, match="build-dialogues"):
        load_set(tmp_path)
