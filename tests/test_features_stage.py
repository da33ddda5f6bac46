"""The features stage on signals with known answers: the octave guard, the VAD fallback."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from stylebench.pipeline.stage import run_stage
from stylebench.records import RespondRecord, Sample, UserTurn
from stylebench.stages.features import FeaturesStage
from stylebench.stages.measure import FeatureConfig
from stylebench.store import RunStore

SR = 16000


def voiced(f0: float, seconds: float) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return 0.3 * sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 6))


def _run(tmp_path, waves, cfg, dim="volume"):
    store = RunStore(tmp_path)
    (tmp_path / "audio").mkdir(exist_ok=True)
    replies = {}
    for k, w in waves.items():
        sf.write(str(tmp_path / "audio" / f"t{k}.wav"), w.astype(np.float32), SR)
        replies[("s", k)] = RespondRecord(
            "s", k, "ok", "fp", text="", audio=f"audio/t{k}.wav", sr=SR, sha256=f"sha{k}"
        )
    turns = tuple(UserTurn("x", "x.wav", SR, "0") for _ in range(3))
    sample = Sample("s", "v", dim, "intensify", "en", "v1", "content", turns)
    return run_stage(store, FeaturesStage(store, [sample], replies, {}, cfg)).records


def test_the_octave_guard_is_each_replys_own_and_never_clips_a_large_change(tmp_path):
    """Turn 2 holds 0.4 s an octave low inside a 200 Hz voice: its own guard (the median of its
    agreed frames +-0.75 octave) keeps 200 Hz while the plain mean drops. Turn 3 is a whole
    octave up (a male-to-female switch): a guard pooled over the sample's turns would cut it,
    the reply's own guard keeps all of it."""
    waves = {
        1: voiced(200, 1.2),
        2: np.concatenate([voiced(200, 0.8), voiced(100, 0.4)]),
        3: voiced(400, 1.2),
    }
    records = _run(tmp_path, waves, FeatureConfig(vad="energy"), dim="pitch")
    t2, t3 = records[("s", 2)], records[("s", 3)]
    assert t2.status == "ok", t2.error
    assert t2.values["f0_mean_guarded"] == pytest.approx(200, rel=0.03)
    assert t2.values["f0_mean"] < 185  # the unguarded mean is pulled down by the low stretch
    assert t3.values["f0_mean_guarded"] == pytest.approx(400, rel=0.03)
    assert t3.values["f0_mean_agreed"] == pytest.approx(400, rel=0.03)
    assert t3.values["f0_mean_weighted"] == pytest.approx(400, rel=0.03)
    assert records[("s", 1)].values["f0_mean_guarded"] == pytest.approx(200, rel=0.03)
    # --vad energy asks no Silero, so there is no Silero span to cross-check and no VAD flag
    assert not any(f.startswith("vad_") for r in records.values() for f in r.flags)
    # a steady harmonic tone is not speech: every dimension leaves it unscored
    assert all("not_speech" in r.flags for r in records.values())


def test_a_silero_miss_in_one_turn_moves_the_whole_sample_to_the_energy_span(tmp_path, monkeypatch):
    """Silero (stood in for) keeps only the first 0.1 s of turn 2: the cross-check sees speech-level
    audio outside it, and all three turns take the energy span, so their levels stay comparable."""
    from stylebench.metrics import vad

    real = vad.speech_span
    gap = np.zeros(int(0.3 * SR))
    waves = {
        k: np.concatenate([gap, g * voiced(200, 1.5), gap])
        for k, g in ((1, 0.5), (2, 1.0), (3, 1.5))
    }

    def shaky(wave, sr, *, backend="silero", **kw):
        if backend == "silero" and abs(np.max(np.abs(wave)) - np.max(np.abs(waves[2]))) < 1e-3:
            return vad.SpeechSpan(((0.3, 0.4),), 0.3, 0.4, 0.1, "silero")
        return real(wave, sr, backend=backend, **kw)

    monkeypatch.setattr(vad, "speech_span", shaky)
    recs = _run(tmp_path, waves, FeatureConfig())
    assert "vad_silero_missed_speech" in recs[("s", 2)].flags
    assert all("vad_energy_fallback" in recs[("s", k)].flags for k in (1, 2, 3))
    spans = [recs[("s", k)].values["active_s"] for k in (1, 2, 3)]
    assert all(s == pytest.approx(1.5, abs=0.1) for s in spans)  # energy spans, not 0.1 s
    db = [recs[("s", k)].values["rms_active_dbfs"] for k in (1, 2, 3)]
    assert db[1] - db[0] == pytest.approx(20 * np.log10(2), abs=0.05)


def test_no_span_keeps_the_pitch_score(tmp_path, monkeypatch):
    """Neither detector finds speech in turn 3: its volume and rate are unscored, its pitch is not."""
    from stylebench.metrics import vad

    real = vad.speech_span
    waves = {k: voiced(200, 1.0) * (0.5 if k == 3 else 1.0) for k in (1, 2, 3)}

    def deaf(wave, sr, *, backend="silero", **kw):
        if np.max(np.abs(wave)) < 0.9 * np.max(np.abs(waves[1])):
            raise ValueError("no speech detected (stand-in)")
        return real(wave, sr, backend=backend, **kw)

    monkeypatch.setattr(vad, "speech_span", deaf)
    recs = _run(tmp_path, waves, FeatureConfig())
    t3 = recs[("s", 3)]
    assert t3.status == "ok" and "rms_active" not in t3.values and "rms_gated" not in t3.values
    assert t3.values["f0_mean_agreed"] == pytest.approx(200, rel=0.03)
    assert any(f.startswith("no_speech_span") for f in t3.flags)


def test_the_volume_score_holds_still_when_quiet_stretches_come_and_go(tmp_path):
    """Turn 2 says turn 1's two loud phrases with a longer pause and a longer quiet voice behind
    them (26 dB down, above the energy VAD's -35 dB); turn 3 is turn 1 6 dB louder. The gated
    score reads the loud phrases in each (0.0 and +6.02 dB); the RMS inside the VAD's segments,
    diluted by the extra quiet seconds, reads turn 2 about 2 dB quieter."""
    from stylebench.metrics.dims.base import ScoreContext, dimension

    quiet = 0.05 * voiced(140, 1.0)

    def reply(pause_s: float, n_quiet: int) -> np.ndarray:
        gap = np.zeros(int(pause_s * SR))
        loud = voiced(200, 1.0)
        return np.concatenate([gap, loud, gap, loud, *[quiet] * n_quiet, gap])

    waves = {1: reply(0.4, 1), 2: reply(1.0, 3), 3: 2.0 * reply(0.4, 1)}
    recs = _run(tmp_path, waves, FeatureConfig(vad="energy"))
    gated = [recs[("s", k)].values["rms_gated_dbfs"] for k in (1, 2, 3)]
    assert gated[1] - gated[0] == pytest.approx(0.0, abs=0.1)
    assert gated[2] - gated[0] == pytest.approx(20 * np.log10(2), abs=1e-4)  # float32 WAV
    segs = [recs[("s", k)].values["rms_active_dbfs"] for k in (1, 2)]
    assert segs[1] - segs[0] < -1.0  # what the score was before the gate
    scores = dimension("volume").turn_values(
        None, {k: recs[("s", k)] for k in (1, 2, 3)}, ScoreContext()
    )[0]
    assert 20 * np.log10(scores[2] / scores[1]) == pytest.approx(0.0, abs=0.1)


def test_every_dimension_measures_through_its_reply_values(tmp_path, monkeypatch):
    """The features stage keeps what each dimension's ``reply_values`` returns: on a 200 Hz
    harmonic voice, pitch reads 200 Hz, volume the tone's RMS, emotion an F0 spread near 0 and
    expressiveness a range near 0; a dimension's hook replaced by another shows in the record
    (so the value comes from the hook, not from the stage)."""
    from stylebench.metrics.dims.base import dimension

    wave = np.concatenate([np.zeros(SR // 2), voiced(200.0, 2.0), np.zeros(SR // 2)])
    cfg = FeatureConfig(vad="energy", quality=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    got = _run(tmp_path / "a", {1: wave}, cfg)[("s", 1)]
    assert got.status == "ok", got.error
    v = got.values
    assert v["f0_mean_weighted"] == pytest.approx(200.0, rel=0.01)
    rms = float(np.sqrt(np.mean(voiced(200.0, 2.0) ** 2)))
    assert v["rms_gated"] == pytest.approx(rms, rel=0.02)
    assert v["f0_std_st"] < 0.1 and v["f0_range_st"] < 0.2
    assert "spm" not in v  # no transcript: speed measures nothing

    def louder(self, frames):
        return {"rms_gated": 0.5, "rms_gated_dbfs": -6.0}, ["volume_hook_ran"]

    monkeypatch.setattr(type(dimension("volume")), "reply_values", louder)
    hooked = _run(tmp_path / "b", {1: wave}, cfg)[("s", 1)]
    assert hooked.values["rms_gated"] == 0.5 and "volume_hook_ran" in hooked.flags
    assert hooked.values["f0_mean_weighted"] == v["f0_mean_weighted"]


def test_no_voiced_frames_leave_pitch_emotion_and_range_unmeasured_with_one_reason(tmp_path):
    """White noise: no tracker majority, so the pitch dimension's ``no_f0`` is the only F0
    flag; emotion and expressiveness add no value and no flag of their own."""
    rng = np.random.default_rng(0)
    noise = 0.1 * rng.standard_normal(2 * SR)
    rec = _run(tmp_path, {1: noise}, FeatureConfig(vad="energy", quality=False))[("s", 1)]
    assert rec.status == "ok", rec.error
    assert not {"f0_mean_weighted", "f0_std_st", "f0_range_st"} & set(rec.values)
    f0_flags = [f for f in rec.flags if f.startswith(("no_f0", "no_f0_range"))]
    assert len(f0_flags) == 1 and f0_flags[0].startswith("no_f0:"), rec.flags
