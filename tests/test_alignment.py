"""The ASR-free alignment behind the speed dimension: two turns that say the same words share a
syllable count, and their change of pace is the aligned tempo; checked on espeak-ng speech whose
tempo, pauses and words are changed by known amounts."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from stylebench.metrics import alignment
from stylebench.metrics.dims.base import ScoreContext, Shared, dimension
from stylebench.records import FeatureRecord
from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

SR = 16000
SENTENCE = "The old lighthouse keeper counted seven ships before the storm reached the harbour."
OTHER = "Bring a warm coat, because the mountain road gets very cold after dark."
INSERT = "and that was long ago"

pytestmark = pytest.mark.skipif(
    shutil.which("espeak-ng") is None or shutil.which("ffmpeg") is None,
    reason="needs espeak-ng and ffmpeg (make setup installs them)",
)


def speak(text: str) -> np.ndarray:
    from stylebench.metrics._common import resample
    from stylebench.synth.espeak import EspeakSynth, voices_for

    audio = EspeakSynth().synthesize(text, voices_for("en")[0])
    pad = np.zeros(int(0.3 * SR), np.float32)
    return np.concatenate([pad, resample(audio.wave, audio.sr, SR).astype(np.float32), pad])


def atempo(wave: np.ndarray, factor: float) -> np.ndarray:
    """FFmpeg's WSOLA tempo change (pitch kept): ``factor`` 0.8 is 1.25 times as long."""
    out = subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "f32le", "-ar", str(SR), "-ac", "1", "-i", "pipe:0"]
        + ["-af", f"atempo={factor}", "-f", "f32le", "pipe:1"],
        input=wave.astype(np.float32).tobytes(),
        capture_output=True,
        check=True,
    )
    return np.frombuffer(out.stdout, np.float32)


@pytest.fixture(scope="module")
def turns() -> dict[str, np.ndarray]:
    a = speak(SENTENCE)
    cut = a.size // 2
    # a phrase said in one turn only, in the middle of the same sentence
    inserted = np.concatenate([a[:cut], speak(INSERT), a[cut:]])
    # a longer pause: the same words at the same pace, with 0.6 s more silence at the middle
    paused = np.concatenate([a[:cut], np.zeros(int(0.6 * SR), np.float32), a[cut:]])
    return {
        "a": a,
        "slower": atempo(a, 0.8),
        "faster": atempo(a, 1.25),
        "inserted": inserted,
        "paused": paused,
        "other": speak(OTHER),
    }


def sample(*waves: np.ndarray) -> dict[int, FeatureRecord]:
    parts = {k: analyse_reply(w, SR, FeatureConfig()) for k, w in enumerate(waves, start=1)}
    done = finish_sample(parts, {}, "en")
    return {
        k: FeatureRecord("s", k, "ok", "fp", values=v[0], flags=v[1])
        for k, v in done.items()
        if not isinstance(v, str)
    }


def speed_change(feats: dict[int, FeatureRecord]) -> float:
    """The speed dimension's change from turn 1 to turn 2, with a count given to both turns
    (the transcripts' syllables: the same words, so the same count)."""
    for f in feats.values():
        f.values["syllables"] = 24.0
        f.values["spm"] = 24.0 * 60 / f.values["span_s"]
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext.of(speed_source="asr"))
    assert isinstance(vals[1], Shared) and vals[1].turns == (1, 2), vals
    return dimension("speed").change(vals[1].value, vals[2].value)


def test_a_tempo_change_reads_back_from_the_alignment(turns):
    for name, want in (("slower", -20.0), ("faster", 25.0)):
        feats = sample(turns["a"], turns[name])
        assert feats[2].values["dtw_cost_prev"] < 1.7
        assert speed_change(feats) == pytest.approx(want, abs=2.0)


def test_a_phrase_only_one_turn_says_is_not_a_change_of_pace(turns):
    """The spans differ by the inserted phrase (about 20%); the pace of the words both turns say
    is the same, and so is the aligned tempo."""
    feats = sample(turns["a"], turns["inserted"])
    span_change = 100 * (feats[1].values["span_s"] / feats[2].values["span_s"] - 1)
    assert span_change < -10.0
    assert abs(speed_change(feats)) < 2.5


def test_a_longer_pause_is_part_of_the_pace(turns):
    """0.6 s more silence between the same words at the same pace: slower speech over the span,
    as the paper's syllables-per-minute reads it."""
    feats = sample(turns["a"], turns["paused"])
    span_change = 100 * (feats[1].values["span_s"] / feats[2].values["span_s"] - 1)
    assert speed_change(feats) == pytest.approx(span_change, abs=2.5)
    assert speed_change(feats) < -5.0


def test_other_words_are_not_the_same_words(turns):
    feats = sample(turns["a"], turns["other"])
    assert feats[2].values["dtw_cost_prev"] > 1.7
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext())
    assert not isinstance(vals.get(2), Shared)


def test_align_on_known_frame_maps():
    """Frame-level ground truth: a sequence stretched to 1.25 times its length, and the same with
    30 frames of other material inserted in the middle (over speech frames: left out of the
    tempo) or 30 frames of a pause (kept)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 12))
    b = a[np.floor(np.arange(250) / 1.25).astype(int)]
    assert alignment.align(a, b).tempo == pytest.approx(1.25, abs=0.02)
    extra = rng.standard_normal((30, 12))
    inserted = np.vstack([a[:100], extra, a[100:]])
    assert alignment.align(a, inserted).tempo == pytest.approx(1.0, abs=0.02)
    pause = np.r_[np.ones(100, bool), np.zeros(30, bool), np.ones(100, bool)]
    slower = alignment.align(a, inserted, speech_b=pause).tempo
    assert slower > 1.1  # the 30 frames are a pause: part of the pace
    with pytest.raises(ValueError, match="speech mask"):
        alignment.align(a, b, speech_a=np.ones(3, bool))
