"""Which feature value scores each dimension, and the per-sample speed-source policy."""

from __future__ import annotations

import pytest

from stylebench.records import FeatureRecord
from stylebench.stages.score import speed_key, value_key


def feat(flags=(), **values) -> FeatureRecord:
    return FeatureRecord("s", 1, "ok", "fp", values=dict(values), flags=list(flags))


def test_value_keys():
    assert value_key("pitch", "guarded_mean") == "f0_mean_guarded"
    assert value_key("pitch", "median") == "f0_median"
    assert value_key("volume", "mean") == "rms_active"


def test_auto_uses_asr_when_every_turn_is_clean():
    feats = [feat(spm=200, text_spm=210) for _ in range(3)]
    assert speed_key(feats) == ("spm", ())


def test_auto_switches_whole_sample_to_text_when_one_turn_is_unreliable():
    feats = [
        feat(spm=200, text_spm=210),
        feat(["asr_repetition"], spm=900, text_spm=230),
        feat(spm=250, text_spm=260),
    ]
    assert speed_key(feats) == ("text_spm", ("speed_from_text",))
    # an empty transcript has no ASR rate at all
    feats = [feat(text_spm=210), feat(spm=220, text_spm=230), feat(spm=250, text_spm=260)]
    assert speed_key(feats)[0] == "text_spm"


def test_auto_keeps_asr_when_the_model_has_no_text_channel():
    feats = [feat(["asr_empty"], nuclei_spm=200), feat(spm=220), feat(spm=250)]
    assert speed_key(feats) == ("spm", ())


def test_explicit_sources():
    assert speed_key([], "asr") == ("spm", ())
    assert speed_key([], "nuclei") == ("nuclei_spm", ("speed_from_nuclei",))
    with pytest.raises(ValueError, match="speed source"):
        speed_key([], "magic")


def test_auto_switches_to_text_when_a_transcript_disagrees_with_the_text_channel():
    clean = [feat(spm=200, text_spm=210, asr_text_er=0.1) for _ in range(3)]
    assert speed_key(clean) == ("spm", ())
    garbled = clean[:2] + [feat(spm=200, text_spm=210, asr_text_er=0.45)]
    assert speed_key(garbled) == ("text_spm", ("speed_from_text", "asr_text_mismatch"))
    assert speed_key(garbled, max_error=0.5) == ("spm", ())  # the limit is the caller's
    assert speed_key(garbled, "asr") == ("spm", ())  # an explicit source is never overridden
