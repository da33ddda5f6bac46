"""The features stage on signals with known answers: the octave guard is applied per sample."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from stylebench.pipeline.features import FeaturesStage
from stylebench.pipeline.measure import FeatureConfig
from stylebench.pipeline.stage import run_stage
from stylebench.records import RespondRecord, Sample, UserTurn
from stylebench.store import RunStore

SR = 16000


def voiced(f0: float, seconds: float) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return 0.3 * sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 6))


def test_a_subharmonic_stretch_is_guarded_out_of_the_pitch_score(tmp_path):
    """Turn 2 holds 0.4 s tracked an octave low (100 Hz inside a 200 Hz voice): the guarded mean
    stays at the speaker's 200 Hz, the plain mean drops, and the turn is flagged."""
    store = RunStore(tmp_path)
    (tmp_path / "audio").mkdir()
    waves = {1: voiced(200, 1.2), 2: np.concatenate([voiced(200, 0.8), voiced(100, 0.4)]), 3: voiced(200, 1.2)}  # fmt: skip
    replies = {}
    for k, w in waves.items():
        sf.write(str(tmp_path / "audio" / f"t{k}.wav"), w.astype(np.float32), SR)
        replies[("s", k)] = RespondRecord("s", k, "ok", "fp", text="", audio=f"audio/t{k}.wav", sr=SR, sha256=f"sha{k}")  # fmt: skip
    turns = tuple(UserTurn("x", "x.wav", SR, "0") for _ in range(3))
    sample = Sample("s", "v", "pitch", "intensify", "en", "v1", "content", turns)
    res = run_stage(store, FeaturesStage(store, [sample], replies, {}, FeatureConfig(vad="energy")))
    t2 = res.records[("s", 2)]
    assert t2.status == "ok", t2.error
    assert t2.values["f0_mean_guarded"] == pytest.approx(200, rel=0.03)
    assert t2.values["f0_mean"] < 185  # the unguarded mean is pulled down by the low stretch
    assert "f0_octave_suspect" in t2.flags
    assert res.records[("s", 1)].values["f0_mean_guarded"] == pytest.approx(200, rel=0.03)
    assert "f0_octave_suspect" not in res.records[("s", 1)].flags
